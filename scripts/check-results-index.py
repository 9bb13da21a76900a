#!/usr/bin/env python3
"""docs/results/README.md names every file (and folder) in docs/results, and nothing that is not
there: the index stays a map of the folder. Run by ctest (results_index)."""
import os
import re
import sys

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "results")
index = open(os.path.join(here, "README.md"), encoding="utf-8").read()
named = {n.rstrip("/") for n in re.findall(r"`([^`\s/]+\.[A-Za-z]+|[^`\s/]+/)`", index)}  # names, not paths
present = {n for n in os.listdir(here) if n != "README.md"}
missing, stale = sorted(present - named), sorted(named - present)
for n in missing:
    print(f"docs/results/{n}: not in docs/results/README.md (add a line saying what question it answers)")
for n in stale:
    print(f"docs/results/README.md names {n}, which is not in docs/results")
sys.exit(1 if missing or stale else 0)

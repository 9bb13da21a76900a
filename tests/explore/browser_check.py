#!/usr/bin/env python3
"""blkc --explore's pages in a real browser (headless Chromium), as a reader uses them.

For softmax (one build), matmul (two builds compared, --explore-diff) and attention backward
(the largest example), this builds the page with blkc, appends tests/explore/page_checks.js
after the page's own script, lets Chromium load it and dump its DOM, and reads what the checks
found: every PTX instruction (and SASS instruction, where nvdisasm is installed: the output says
whether there was SASS) tied to a line of the source or to its kernel's prologue; a click on a source line lights exactly that line's pieces in every column and scrolls each
code column to them; a hovered instruction lights its source line; a row of the table is tied
to its line. It also bounds the largest page's size and the time Chromium takes to parse it and
run its script (a bound against a page that stops being usable, not a benchmark), and takes a
screenshot of each page with one line clicked.

    tests/explore/browser_check.py --blkc BLKC --examples DIR --out DIR

Chromium: $BLK_CHROMIUM, else chromium, chromium-browser or google-chrome on the PATH. Without
one the check is skipped (exit 77) unless $BLK_REQUIRE_BROWSER is set (scripts/test.sh sets it,
after scripts/setup.sh installed Debian's chromium), when it fails."""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77

# (name, blkc's arguments after the file, the source line clicked for the screenshot, the most
# source lines clicked by the checks)
PAGES = [
    ("softmax", "softmax.blk", ["--arch", "sm_90a"], 10, None),
    ("matmul_diff", "matmul.blk",
     ["--arch", "sm_90a", "--explore-diff", "--assume stride_ak=1,stride_bn=1,stride_cn=1"], 30, None),
    ("attention_bwd", "attention_bwd.blk", ["--arch", "sm_90a"], 175, 40),
]
LARGEST_BYTES = 3 << 20  # the largest page with its SASS (1.1 MB when this was written; 0.7 MB without)
LARGEST_PARSE_MS = 15000


def chromium():
    chosen = os.environ.get("BLK_CHROMIUM")
    if chosen:
        return chosen
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def run_browser(browser, args, timeout=120):
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--window-size=1600,1000", "--user-data-dir=" + tempfile.mkdtemp(prefix="blk-chromium-")] + args
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=timeout)
    shutil.rmtree(cmd[6].split("=", 1)[1], ignore_errors=True)
    return done.returncode, done.stdout.decode("utf-8", "replace")


def with_script(page, script):
    at = page.rindex("</body>")
    return page[:at] + "<script>" + script + "</script>\n" + page[at:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--blkc", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--out", required=True, help="where the pages and screenshots go")
    a = ap.parse_args()
    browser = chromium()
    if not browser:
        print("explore in a browser: no Chromium ($BLK_CHROMIUM, chromium, chromium-browser, google-chrome)")
        return 1 if os.environ.get("BLK_REQUIRE_BROWSER") else SKIP
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(HERE, "page_checks.js"), encoding="utf-8") as f:
        checks = f.read()
    failed = 0
    for name, example, args, shot_line, most_clicks in PAGES:
        page_path = os.path.join(a.out, name + ".html")
        build = subprocess.run([a.blkc, os.path.join(a.examples, example), "--no-hints", "--explore", page_path] + args,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if build.returncode != 0:
            print(f"{name}: blkc failed: {build.stderr.decode()}")
            failed += 1
            continue
        with open(page_path, encoding="utf-8") as f:
            page = f.read()
        setup = f"window.BLK_CHECK_MOST_CLICKS={most_clicks};" if most_clicks else ""
        checked = os.path.join(a.out, name + "_checked.html")
        with open(checked, "w", encoding="utf-8") as f:
            f.write(with_script(page, setup + checks))
        rc, dom = run_browser(browser, ["--dump-dom", "file://" + checked])
        # the last: the checks' own text (in the dumped script) names the element too
        found = re.findall(r'<pre id="blk-check">(\{.*?)</pre>', dom, re.S)
        if rc != 0 or not found:
            print(f"{name}: Chromium gave no result (exit {rc}); the page's script or the checks failed")
            failed += 1
            continue
        result = json.loads(html.unescape(found[-1]))
        problems = result["problems"]
        if result["instructions"] < 20 or result["clicked"] < 3 or not result["hovered"]:
            problems.append("too little was checked: " + json.dumps(result))
        if name == "attention_bwd":
            size = len(page.encode())
            if size > LARGEST_BYTES:
                problems.append(f"{size} bytes: more than {LARGEST_BYTES}")
            if result["parsedMs"] > LARGEST_PARSE_MS:
                problems.append(f"parsed and scripted in {result['parsedMs']} ms: more than {LARGEST_PARSE_MS}")
        sass = any(c.startswith("SASS") for c in result["columns"])
        print(f"{name}: columns {', '.join(result['columns'])}{'' if sass else ' (no SASS: no disassembler here)'}; "
              f"{result['instructions']} instructions "
              f"({result['prologue']} in prologues), {result['clicked']} source lines clicked, "
              f"{result['elements']} elements, {len(page.encode())} bytes, parsed in {result['parsedMs']} ms"
              + ("" if not problems else "\n  " + "\n  ".join(problems)))
        failed += bool(problems)
        # the screenshot: the page with one source line clicked, as a reader sees it
        shot_page = os.path.join(a.out, name + "_shot.html")
        with open(shot_page, "w", encoding="utf-8") as f:
            f.write(with_script(page, f"document.querySelector('.col.src [data-l=\"{shot_line}\"]').click();"))
        rc, _ = run_browser(browser, ["--screenshot=" + os.path.join(a.out, name + ".png"), "file://" + shot_page])
        if rc != 0:
            print(f"{name}: no screenshot (exit {rc})")
            failed += 1
    print("explore in a browser: " + ("passed" if not failed else f"{failed} page(s) failed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

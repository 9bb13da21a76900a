#!/usr/bin/env python3
"""The editor grammars (editors/) name exactly the compiler's keywords, types and builtins, so
they cannot drift from the language. Run by ctest (editor_grammars).

  keyword  compiler/lexer.re's keyword table
  type     compiler/dtypes.def's names, and the other names dtype_from_name takes (compiler/types.c)
  builtin  compiler/builtins.def, and ops.def's MATH_OP rows (builtins too)

In editors/textmate/blk.tmLanguage.json the word lists are the \\b(?:a|b)\\b alternations of the
repository rules "keywords", "types" and "builtins"; in editors/vim/syntax/blk.vim the
`syn keyword` lines of the groups blkKw*, blkType and blkBuiltin. Words that are identifiers to
the lexer but special where they stand (rule "contextual", groups blkCtx*) must each be a string
the compiler's sources compare with, so a removed one is noticed too.

Usage: check-editor-grammars.py [ROOT]   (ROOT: the repository, by default this script's.)"""
import glob
import json
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
TEXTMATE = "editors/textmate/blk.tmLanguage.json"
VIM = "editors/vim/syntax/blk.vim"
problems = []


def read(path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def found(words, what, where):
    if not words:  # a format change here must fail loudly, not compare against nothing
        sys.exit(f"check-editor-grammars: found no {what} in {where}; has its format changed?")
    return set(words)


def tables():
    lexer = re.search(r"keywords\[\]\s*=\s*\{(.*?)\};", read("compiler/lexer.re"), re.S)
    keywords = re.findall(r'\{\s*"(\w+)"\s*,\s*TOK_\w+\s*\}', lexer.group(1) if lexer else "")
    from_name = re.search(r"\bdtype_from_name\([^)]*\)\s*\{.*?\n\}", read("compiler/types.c"), re.S)
    types = re.findall(r'^DTYPE\(\w+,\s*"(\w+)"', read("compiler/dtypes.def"), re.M)
    builtins = re.findall(r'^BUILTIN\(\w+,\s*"(\w+)"', read("compiler/builtins.def"), re.M)
    maths = re.findall(r"^MATH_OP\(\w+,\s*(\w+)\)", read("compiler/ops.def"), re.M)
    return {
        "keyword": found(keywords, "keyword table", "compiler/lexer.re"),
        "type": found(types, "DTYPE rows", "compiler/dtypes.def")
        | found(re.findall(r'memcmp\(name,\s*"(\w+)"', from_name.group(0) if from_name else ""),
                "extra type name in dtype_from_name", "compiler/types.c"),
        "builtin": found(builtins, "BUILTIN rows", "compiler/builtins.def")
        | found(maths, "MATH_OP rows", "compiler/ops.def"),
    }


def textmate_lists():
    grammar = json.loads(read(TEXTMATE))
    repo, top = grammar["repository"], {p.get("include") for p in grammar["patterns"]}

    def regexes(rule):
        yield from (rule[k] for k in ("match", "begin") if k in rule)
        for p in rule.get("patterns", []):
            yield from regexes(p)

    lists = {}
    for rule, category in [("keywords", "keyword"), ("types", "type"), ("builtins", "builtin"), ("contextual", None)]:
        if "#" + rule not in top:  # a list that is never included highlights nothing
            problems.append(f"{TEXTMATE}: rule '{rule}' is missing or not included in the top-level patterns")
        words = {w for r in regexes(repo.get(rule, {})) for alt in re.findall(r"\\b\((?:\?:)?(\w+(?:\|\w+)*)\)", r)
                 for w in alt.split("|")}
        lists[category] = lists.get(category, set()) | words
    return lists


def vim_lists():
    text = re.sub(r"\n\s*\\", " ", read(VIM))  # join vim's continuation lines
    prefixes = [("blkKw", "keyword"), ("blkType", "type"), ("blkBuiltin", "builtin"), ("blkCtx", None)]
    lists = {}
    for group, rest in re.findall(r"^\s*syn(?:tax)?\s+keyword\s+(\w+)\s+(.*)$", text, re.M):
        category = next((c for p, c in prefixes if group.startswith(p)), "unknown")
        if category == "unknown":  # every keyword list must be one the check knows
            problems.append(f"{VIM}: syn keyword group {group} is none of blkKw*, blkType, blkBuiltin, blkCtx*")
            continue
        options = {"contained", "conceal", "transparent", "skipwhite", "skipnl", "skipempty"}
        words = {w for w in rest.split() if w not in options and "=" not in w}
        lists[category] = lists.get(category, set()) | words
    return lists


def compare(path, lists, expected, sources):
    for category, want in expected.items():
        have = lists.get(category, set())
        for w in sorted(want - have):
            problems.append(f"{path}: {category} '{w}' is missing (the compiler has it)")
        for w in sorted(have - want):
            problems.append(f"{path}: '{w}' is listed as a {category}, but the compiler's {category} table lacks it")
    for w in sorted(lists.get(None, set())):
        if any(w in want for want in expected.values()):
            problems.append(f"{path}: contextual word '{w}' is in a compiler table: list it with those")
        elif f'"{w}"' not in sources:
            problems.append(f"{path}: contextual word '{w}' is no string in compiler/*.c: is it still special?")


expected = tables()
sources = "".join(open(p, encoding="utf-8").read() for p in glob.glob(os.path.join(root, "compiler", "*.c")))
compare(TEXTMATE, textmate_lists(), expected, sources)
compare(VIM, vim_lists(), expected, sources)
for p in problems:
    print(p)
if problems:
    sys.exit(f"check-editor-grammars: {len(problems)} mismatch(es); the tables are in compiler/ (lexer.re, "
             "dtypes.def, types.c, builtins.def, ops.def)")
print(f"editor grammars OK: {len(expected['keyword'])} keywords, {len(expected['type'])} types, "
      f"{len(expected['builtin'])} builtins in {TEXTMATE} and {VIM}")

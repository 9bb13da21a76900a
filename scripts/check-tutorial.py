#!/usr/bin/env python3
"""Runs every snippet of docs/tutorial.md, so the tutorial stays true. Run by
ctest (tutorial); standard library only.

    scripts/check-tutorial.py BUILD_DIR [--doc PATH] [--gpu] [--keep]

Each fenced block of the tutorial says what it is in its info string:
  blk file=NAME, c file=NAME, python file=NAME   a file, saved under NAME in a
      fresh directory (the reader's working directory); each .blk is compiled
      to PTX with BUILD_DIR's blkc; each C and Python file must be run by a
      `sh` block (`./NAME_WITHOUT_.c`, `python3 NAME`)
  python file=NAME gpu                           needs a GPU: syntax-checked only
  sh                                             commands, run with bash -e in
      that directory, with BLK_SRC (the checkout), BLK_BUILD (BUILD_DIR),
      blkc and python3 on the PATH
  sh ptxas                                       run where ptxas is found
  sh gpu, sh skip                                not run (a GPU; a change to the
      reader's machine: cloning, building, installing)
  text output                                    the output of the `sh` block just
      above it: each line, whitespace runs taken as one space, must be part of
      a line of that output; `...` inside a line stands for any text, and a
      line of `...` alone marks lines left out
  python triton                                  Triton code shown for comparison
Any other block is an error, so no snippet goes unchecked by mistake.

Each runnable snippet checks its own result (an assert, an exit status), so a
wrong result fails it. The C programs link BUILD_DIR's libblk.so.0 as the
tutorial says; a build without it (sanitizer and fuzzing builds) links
install-lib/libblk.a instead and leaves out the tutorial's `cc` lines. The
Python snippets need NumPy (this interpreter's, else /usr/bin/python3's);
without it they are skipped with a note, never the blk and C ones. --gpu also
runs the GPU blocks. Prints one OK line, or names the snippet that failed
(file:line) and exits 1.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 600


class Failure(Exception):
    pass


def parse_blocks(path):
    """[(line, info, lang, words, attrs, text)] for each fenced block of the file."""
    blocks, lines = [], open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^```(.*)$", lines[i])
        if not m:
            i += 1
            continue
        start, info = i + 1, m.group(1).split()
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        if j == len(lines):
            raise Failure(f"{path}:{start}: a code block that is never closed")
        lang = info[0] if info else ""
        attrs = dict(w.split("=", 1) for w in info[1:] if "=" in w)
        words = {w for w in info[1:] if "=" not in w}
        blocks.append((start, m.group(1).strip(), lang, words, attrs, "\n".join(lines[i + 1:j]) + "\n"))
        i = j + 1
    return blocks


def classify(path, blocks):
    """Checks every block is of a known kind; returns them as dicts."""
    out = []
    for line, info, lang, words, attrs, text in blocks:
        where = f"{path}:{line}"
        kind = None
        if lang in ("blk", "c", "python") and "file" in attrs and words <= {"gpu"}:
            if words and lang != "python":
                raise Failure(f"{where}: only a python file may be marked gpu")
            kind = "file"
        elif lang == "sh" and words <= {"gpu", "skip", "ptxas"} and len(words) <= 1 and not attrs:
            kind = "sh"
        elif lang == "text" and words == {"output"} and not attrs:
            kind = "output"
        elif lang == "python" and words == {"triton"} and not attrs:
            kind = "shown"
        if kind is None:
            raise Failure(f"{where}: a code block whose info string ('{info}') says neither how to check it nor "
                          "why not (see scripts/check-tutorial.py)")
        out.append({"where": where, "kind": kind, "lang": lang, "words": words, "file": attrs.get("file"),
                    "text": text})
    names = [b["file"] for b in out if b["kind"] == "file"]
    for name in names:
        if names.count(name) > 1 or "/" in name:
            raise Failure(f"{path}: file name {name!r} given twice or with a directory")
    for i, b in enumerate(out):
        if b["kind"] == "output" and (i == 0 or out[i - 1]["kind"] != "sh"):
            raise Failure(f"{b['where']}: an output block must follow a sh block")
    return out


def cmake_cache(build):
    cache = {}
    try:
        for line in open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8"):
            m = re.match(r"^([A-Za-z_0-9]+):[A-Z]+=(.*)$", line.rstrip("\n"))
            if m:
                cache[m.group(1)] = m.group(2)
    except OSError:
        pass
    return cache


def numpy_python():
    """An interpreter that imports NumPy: this one, else Debian's (which python3-numpy is for)."""
    for exe in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if exe and os.access(exe, os.X_OK):
            r = subprocess.run([exe, "-c", "import numpy"], capture_output=True)
            if r.returncode == 0:
                return exe
    return None


def find_ptxas():
    for exe in (os.environ.get("BLKC_PTXAS"), shutil.which("ptxas"), "/usr/local/cuda/bin/ptxas"):
        if exe and os.access(exe, os.X_OK):
            return exe
    return None


def static_link_flags(build, cache):
    """For a build without libblk.so.0: the compile and link flags of install-lib/libblk.a,
    as blk.pc gives them, with the build's sanitizer and coverage flags."""
    lib = os.path.join(build, "install-lib", "libblk.a")
    pc = os.path.join(build, "blk.pc")
    if not os.path.exists(lib) or not os.path.exists(pc):
        raise Failure(f"{build} has neither libblk.so.0 nor install-lib/libblk.a and blk.pc: build it first")
    libs = next(line for line in open(pc, encoding="utf-8") if line.startswith("Libs:"))[5:]
    libs = shlex.split(libs.replace("${libdir}/libblk.a", lib))
    flags = shlex.split(cache.get("CMAKE_C_FLAGS", ""))
    if cache.get("BLK_SANITIZE") == "ON" or cache.get("BLK_FUZZ") == "ON":
        flags += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
    if cache.get("BLK_FUZZ") == "ON":
        flags += ["-fsanitize=fuzzer-no-link"]
    return [cache.get("CMAKE_C_COMPILER") or "cc"] + flags + ["-I", os.path.join(ROOT, "include")], libs


def show(text, limit=60):
    lines = text.rstrip("\n").split("\n")
    if len(lines) > limit:
        lines = lines[:limit // 2] + [f"    [{len(lines) - limit} lines left out]"] + lines[-limit // 2:]
    return "\n".join("    | " + line for line in lines)


def norm(s):
    return " ".join(s.split())


def check_output(block, output):
    """Every line of the output block is part of a line of the command's output."""
    have = [norm(line) for line in output.split("\n")]
    for line in block["text"].split("\n"):
        want = norm(line)
        if not want or want == "...":
            continue
        parts = [p.strip() for p in want.split("...") if p.strip()]

        def matches(got):
            at = 0
            for p in parts:
                at = got.find(p, at)
                if at < 0:
                    return False
                at += len(p)
            return True
        if not any(matches(got) for got in have):
            raise Failure(f"{block['where']}: this line of the output shown is not in the command's output:\n"
                          f"    {line.strip()}\n  the command printed:\n{show(output)}")


def main():
    ap = argparse.ArgumentParser(description="Check every snippet of docs/tutorial.md.")
    ap.add_argument("build", help="the build directory (blkc, libblk.so.0)")
    ap.add_argument("--doc", help="the tutorial (default: the checkout's docs/tutorial.md)")
    ap.add_argument("--gpu", action="store_true", help="also run the blocks marked gpu (needs a GPU, PyTorch)")
    ap.add_argument("--keep", action="store_true", help="keep the working directory and say where it is")
    opts = ap.parse_args()
    build = os.path.abspath(opts.build)
    doc = opts.doc or os.path.join(ROOT, "docs", "tutorial.md")
    blkc = os.path.join(build, "compiler", "blkc")
    if not os.access(blkc, os.X_OK):
        raise Failure(f"no blkc at {blkc}: build it first (scripts/build.sh, or ninja -C {opts.build})")
    blocks = classify(doc, parse_blocks(doc))
    cache = cmake_cache(build)
    shared = os.path.exists(os.path.join(build, "libblk.so.0"))
    python = numpy_python() if shared else None
    ptxas = find_ptxas()
    notes, counts = [], {"blk": 0, "c": 0, "python": 0, "sh": 0, "output": 0}
    if not shared:
        notes.append(f"{build} has no libblk.so.0: C programs linked with install-lib/libblk.a, Python skipped")
    elif not python:
        notes.append("no Python with NumPy (python3-numpy): Python snippets skipped")

    work = tempfile.mkdtemp(prefix="blk-tutorial.")
    try:
        check_dir = os.path.join(work, ".check")
        shim = os.path.join(check_dir, "bin")
        os.makedirs(shim)
        env = dict(os.environ, BLK_SRC=ROOT, BLK_BUILD=build, BLK_CACHE_DIR=os.path.join(check_dir, "cache"),
                   NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1")
        env["PATH"] = os.pathsep.join([shim, os.path.join(build, "compiler"), env.get("PATH", "")])
        if python:
            with open(os.path.join(shim, "python3"), "w") as f:  # a script, not a link: a venv stays a venv
                f.write(f'#!/bin/sh\nexec {shlex.quote(python)} "$@"\n')
            os.chmod(os.path.join(shim, "python3"), 0o755)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(ROOT, "python"), env.get("PYTHONPATH")]))
            env.setdefault("BLK_LIBRARY", os.path.join(build, "libblk.so.0"))
        if cache.get("BLK_SANITIZE") == "ON" or cache.get("BLK_FUZZ") == "ON":
            env.setdefault("ASAN_OPTIONS", "detect_leaks=0")  # LLVM's caches live until exit

        # 1. the files, as the reader saves them; every kernel compiles
        files = [b for b in blocks if b["kind"] == "file"]
        for b in files:
            with open(os.path.join(work, b["file"]), "w", encoding="utf-8") as f:
                f.write(b["text"])
        for b in files:
            if b["lang"] == "blk":
                r = subprocess.run([blkc, b["file"], "-o", os.path.join(check_dir, b["file"] + ".ptx")], cwd=work,
                                   env=env, capture_output=True, text=True, timeout=TIMEOUT)
                if r.returncode != 0:
                    raise Failure(f"{b['where']}: {b['file']} does not compile:\n{show(r.stderr)}")
                counts["blk"] += 1
            elif b["lang"] == "python" and "gpu" in b["words"]:
                try:
                    compile(b["text"], b["file"], "exec")
                except SyntaxError as e:
                    raise Failure(f"{b['where']}: {b['file']}: {e}")
            elif b["lang"] == "c" and not shared:  # the tutorial's cc line needs libblk.so.0
                cc, libs = static_link_flags(build, cache)
                exe = os.path.join(work, b["file"][:-2])
                r = subprocess.run(cc + [b["file"], "-o", exe] + libs, cwd=work, env=env, capture_output=True,
                                   text=True, timeout=TIMEOUT)
                if r.returncode != 0:
                    raise Failure(f"{b['where']}: {b['file']} does not compile:\n{show(r.stdout + r.stderr)}")

        # 2. every C and Python file is run by a command
        commands = "\n".join(b["text"] for b in blocks if b["kind"] == "sh")
        for b in files:
            run = {"c": r"\./" + re.escape(b["file"][:-2]), "python": r"python3\s+" + re.escape(b["file"])}.get(b["lang"])
            if run and not re.search(r"(^|\s)" + run + r"(\s|$)", commands, re.M):
                raise Failure(f"{b['where']}: no sh block runs {b['file']}")

        # 3. the commands, in order, each with the output shown after it
        for i, b in enumerate(blocks):
            if b["kind"] != "sh":
                continue
            skip = None
            text = b["text"]
            if "skip" in b["words"]:
                skip = "skip"
            elif "gpu" in b["words"] and not opts.gpu:
                skip = "gpu"
            elif "ptxas" in b["words"] and not ptxas:
                skip = "no ptxas"
            elif re.search(r"^\s*python3\s", text, re.M) and not python:
                skip = "no Python with NumPy" if shared else "no libblk.so.0 for Python"
            if not shared:
                text = "\n".join(line for line in text.split("\n") if not re.match(r"^\s*cc\s", line))
            if skip:
                if skip not in ("skip", "gpu"):
                    notes.append(f"{b['where']}: not run ({skip})")
                continue
            try:
                r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", text], cwd=work, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                raise Failure(f"{b['where']}: the commands ran past {TIMEOUT} s:\n{show(text)}")
            if r.returncode != 0:
                ran = [f"{f['file']} ({f['where']})" for f in files if f["lang"] in ("c", "python")
                       and re.search(r"(\./|python3\s+)" + re.escape(f["file"] if f["lang"] == "python"
                                                                     else f["file"][:-2]) + r"(\s|$)", text)]
                raise Failure(f"{b['where']}: the commands failed (exit {r.returncode})"
                              f"{': they run ' + ', '.join(ran) if ran else ''}:\n{show(text)}\n"
                              f"  output:\n{show(r.stdout)}")
            counts["sh"] += 1
            for line in text.split("\n"):
                m = re.match(r"^\s*(?:\./(\S+)|python3\s+(\S+\.py))", line)
                if m:
                    counts["c" if m.group(1) else "python"] += 1
            if i + 1 < len(blocks) and blocks[i + 1]["kind"] == "output":
                check_output(blocks[i + 1], r.stdout)
                counts["output"] += 1
    finally:
        if opts.keep:
            print(f"check-tutorial: working directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    for note in notes:
        print(f"check-tutorial: note: {note}")
    print(f"check-tutorial: OK: {doc}: {counts['blk']} kernels compiled, {counts['c']} C and "
          f"{counts['python']} Python programs run, {counts['sh']} command blocks run, {counts['output']} outputs "
          "matched")


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print(f"check-tutorial: FAILED: {e}")
        sys.exit(1)

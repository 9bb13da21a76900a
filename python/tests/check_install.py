"""`pip install ./python` as a user would run it, offline: into a fresh
virtual environment (Debian's Python refuses installs into itself), then the
package's tests run on the installed copy, from elsewhere, with neither
PYTHONPATH nor BLK_LIBRARY set, so they can only pass if the install bundled
the library and the package finds it by itself.

Usage: check_install.py LIBBLK   (CTest `python_install` passes the built
libblk.so.0; the backend bundles the file BLK_LIBRARY names.)"""
import filecmp
import os
import subprocess
import sys
import tempfile

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, env, cwd):
    print("$", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(done.stdout[-4000:], flush=True)
    if done.returncode:
        sys.exit(f"check_install: failed (exit {done.returncode}): {' '.join(cmd)}")
    return done.stdout


def main():
    library = os.path.abspath(sys.argv[1])
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BLK_LIBRARY")}
    with tempfile.TemporaryDirectory() as tmp:
        venv = os.path.join(tmp, "venv")
        # system site packages: NumPy comes from Debian, as the README's set-up installs it
        run([sys.executable, "-m", "venv", "--system-site-packages", venv], clean, tmp)
        py = os.path.join(venv, "bin", "python")
        run([py, "-m", "pip", "install", "--no-index", "--no-cache-dir", "--disable-pip-version-check",
             PYTHON_DIR], dict(clean, BLK_LIBRARY=library), tmp)
        where = run([py, "-c", "import blk, blk._lib; print(blk.__file__); print(blk._lib.lib._name)"], clean,
                    tmp).split()
        site = os.path.join(venv, "lib")
        if not all(p.startswith(site) for p in where):
            sys.exit(f"check_install: the package or its library is not the installed one: {where}")
        if not filecmp.cmp(where[1], library, shallow=False):
            sys.exit("check_install: the bundled libblk.so.0 differs from the one built")
        run([py, "-m", "unittest", "discover", "-s", os.path.join(PYTHON_DIR, "tests")], clean, tmp)
        run([py, "-m", "pip", "uninstall", "-y", "blk"], clean, tmp)
        if any(os.path.exists(p) for p in where):
            sys.exit("check_install: pip uninstall left files behind")
    print("check_install: ok")


if __name__ == "__main__":
    main()

"""The package's build backend (PEP 517 and 660), standard library only, so
`pip install ./python` works offline with nothing to download.

The wheel holds python/blk and a copy of the runtime's shared library,
libblk.so.0, so that the installed package finds it beside itself. The
library is, in this order: the file $BLK_LIBRARY names; the checkout's
build/libblk.so.0 (scripts/build.sh makes it); or one built here with CMake
into build-python/ of the checkout. An editable install (`pip install -e`)
points at python/ and uses the checkout's library (blk/_lib.py looks there).
"""
import ast
import base64
import hashlib
import io
import os
import subprocess
import sysconfig
import tarfile
import zipfile

NAME = "blk"
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
CHECKOUT = os.path.dirname(PACKAGE_DIR)
LIBRARY = "libblk.so.0"


def _version():
    # one place for the version: blk/__init__.py
    with open(os.path.join(PACKAGE_DIR, NAME, "__init__.py"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("__version__"):
                return ast.literal_eval(line.split("=", 1)[1].split("#", 1)[0].strip())
    raise RuntimeError("blk/__init__.py has no __version__")


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\n"
            "Summary: Compile and launch blk block-level GPU kernels from Python\n"
            "Requires-Python: >=3.10\nLicense: see the blkc repository\n")


def _platform_tag():
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _built_library():
    """The libblk.so.0 to bundle (see the module's docstring)."""
    named = os.environ.get("BLK_LIBRARY")
    if named:
        if not os.path.isfile(named):
            raise RuntimeError(f"BLK_LIBRARY names {named}, which is not a file")
        return named
    in_build = os.path.join(CHECKOUT, "build", LIBRARY)
    if os.path.isfile(in_build):
        return in_build
    if not os.path.isfile(os.path.join(CHECKOUT, "CMakeLists.txt")):
        raise RuntimeError("no libblk.so.0 to bundle: set BLK_LIBRARY to one, or install from a blkc checkout")
    out = os.path.join(CHECKOUT, "build-python")
    print(f"blk: building {LIBRARY} with CMake in {out}", flush=True)
    subprocess.run(["cmake", "-S", CHECKOUT, "-B", out, "-DCMAKE_BUILD_TYPE=Release", "-DBLK_TESTS=OFF"], check=True)
    subprocess.run(["cmake", "--build", out, "--target", "blk_shared"], check=True)
    return os.path.join(out, LIBRARY)


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory, files, tag):
    """files: [(name in the wheel, bytes)]; adds the .dist-info and RECORD."""
    dist_info = f"{NAME}-{_version()}.dist-info"
    files = files + [
        (f"{dist_info}/METADATA", _metadata().encode()),
        (f"{dist_info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: blk_build\nRoot-Is-Purelib: false\n"
                                f"Tag: {tag}\n").encode()),
        (f"{dist_info}/top_level.txt", f"{NAME}\n".encode()),
    ]
    record = [_record_line(name, data) for name, data in files] + [f"{dist_info}/RECORD,,"]
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    wheel = f"{NAME}-{_version()}-{tag}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))  # reproducible
            info.external_attr = (0o755 if name.endswith(".so.0") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel


def _package_files():
    out = []
    src = os.path.join(PACKAGE_DIR, NAME)
    for name in sorted(os.listdir(src)):
        if name.endswith(".py"):
            with open(os.path.join(src, name), "rb") as f:
                out.append((f"{NAME}/{name}", f.read()))
    return out


# --- the PEP 517 hooks -------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with open(_built_library(), "rb") as f:
        library = f.read()
    tag = f"py3-none-{_platform_tag()}"  # it carries a native library
    return _write_wheel(wheel_directory, _package_files() + [(f"{NAME}/{LIBRARY}", library)], tag)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    pth = (PACKAGE_DIR + "\n").encode()
    return _write_wheel(wheel_directory, [(f"_{NAME}_editable.pth", pth)], f"py3-none-{_platform_tag()}")


def build_sdist(sdist_directory, config_settings=None):
    """The Python sources only: a wheel built from it needs $BLK_LIBRARY."""
    base = f"{NAME}-{_version()}"
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as tar:
        for rel in ["pyproject.toml", "build_backend/blk_build.py"] + [n for n, _ in _package_files()]:
            tar.add(os.path.join(PACKAGE_DIR, rel), arcname=f"{base}/{rel}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return os.path.basename(path)


__all__ = ["build_wheel", "build_sdist", "build_editable", "get_requires_for_build_wheel",
           "get_requires_for_build_sdist", "get_requires_for_build_editable"]

"""The image's root file system: Debian's CPython 3.11 extracted by mmdebstrap, trimmed, plus the function.

No base image is pulled: ``mmdebstrap --variant=extract`` unpacks the named Debian packages and their
dependencies (no maintainer scripts run), then everything a Python server does not need goes: the package
manager, documentation, locales, the Python test suite and tools. The function and its pinned wheels go
to ``/usr/local/lib/python3.11/dist-packages`` (on Debian's default ``sys.path``), byte-compiled with
hash-checked ``.pyc`` files so a read-only root file system costs no start-up time.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
from pathlib import Path

SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
# CPython, and the C++ runtime grpcio's and cel-expr-python's extension modules link against.
PACKAGES = ("python3.11-minimal", "libpython3.11-stdlib", "python3-minimal", "libstdc++6")
SITE = Path("usr/local/lib/python3.11/dist-packages")
LAUNCHER = Path("usr/local/bin/function-dynamo")
USER_ID = 65532  # the conventional "nonroot" user of distroless images
# Paths (relative to the root) removed after extraction: nothing the function runs needs them.
TRIM = (
    "usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale", "usr/share/lintian",
    "usr/share/bug", "usr/share/menu", "usr/share/pixmaps", "usr/share/applications", "usr/share/dpkg",
    "usr/share/debconf", "usr/share/python3", "usr/share/binfmts", "usr/lib/python3.11/test",
    "usr/lib/python3.11/idlelib", "usr/lib/python3.11/tkinter", "usr/lib/python3.11/turtledemo",
    "usr/lib/python3.11/lib2to3", "usr/lib/python3.11/ensurepip", "usr/lib/python3.11/pydoc_data",
    "usr/lib/python3.11/config-3.11-x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu/gconv", "var/lib/dpkg",
    "var/lib/apt", "var/cache", "var/log", "etc/apt", "etc/dpkg", "etc/machine-id", "etc/ld.so.cache",
    "usr/bin/dpkg", "usr/bin/dpkg-deb", "usr/bin/dpkg-divert", "usr/bin/dpkg-maintscript-helper",
    "usr/bin/dpkg-query", "usr/bin/dpkg-realpath", "usr/bin/dpkg-split", "usr/bin/dpkg-statoverride",
    "usr/bin/dpkg-trigger", "usr/bin/update-alternatives", "usr/bin/py3clean", "usr/bin/py3compile",
    "usr/bin/py3versions", "usr/sbin", "sbin", "usr/lib/dpkg", "dev", "bin", "lib/systemd",
)  # fmt: skip
# Empty directories every container runtime mounts over.
MOUNT_POINTS = ("dev", "proc", "sys", "tmp")
LAUNCHER_TEXT = """#!/usr/bin/python3 -sP
# function-dynamo's command line (the image entrypoint runs "function-dynamo serve").
import sys

from functions.serve import runtime_cli

sys.exit(runtime_cli())
"""


def extract_debian(root: Path, epoch: int) -> list[str]:
    """Debian's CPython into ``root``; returns the packages extracted, as ``name=version``."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch)}
    listing = root.parent / f"{root.name}.debs"
    hook = f'ls "$1"/var/cache/apt/archives/ > {listing}'  # the extract variant runs only extract hooks
    subprocess.run(
        ["mmdebstrap", "--variant=extract", "--mode=root", "--quiet", f"--include={','.join(PACKAGES)}",
         f"--extract-hook={hook}", SUITE, str(root), MIRROR],
        check=True, env=env,
    )  # fmt: skip
    debs = [name for name in listing.read_text().split() if name.endswith(".deb")]
    listing.unlink()
    return sorted("=".join(name.removesuffix(".deb").split("_")[:2]) for name in debs)


def trim(root: Path) -> None:
    for relative in TRIM:
        path = root / relative
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
    for cache in sorted(root.rglob("__pycache__"), reverse=True):
        shutil.rmtree(cache)  # Debian ships none; any left would carry timestamps
    for mount_point in MOUNT_POINTS:
        (root / mount_point).mkdir(exist_ok=True)


def add_user(root: Path) -> None:
    """A passwd and group entry for the non-root user the image runs as, and a writable /tmp."""
    etc = root / "etc"
    etc.mkdir(exist_ok=True)
    (etc / "passwd").write_text(
        f"root:x:0:0:root:/root:/usr/sbin/nologin\nnonroot:x:{USER_ID}:{USER_ID}::/tmp:/usr/sbin/nologin\n"
    )
    (etc / "group").write_text(f"root:x:0:\nnonroot:x:{USER_ID}:\n")
    (root / "tmp").mkdir(exist_ok=True)
    (root / "tmp").chmod(0o1777)


# The tooling's distributions (pyproject.toml's "tooling" extra): the offline validator's CEL engine
# (`function-dynamo validate` and `render`). `serve` never imports them (tests/test_layers.py
# and tests/test_image.py check), so the runtime image leaves them out.
NOT_IN_IMAGE = frozenset({"cel-expr-python"})
# The project's own tooling: the CLI besides `serve`, the offline validator, XRD generation and each kind's XRD
# definition. Removed from the image's site directory after the project's wheel is installed.
TOOLING_PATHS = ("functions/tooling", "functions/xrd", "functions/kinds/*/*_xrd.py")


def image_requirements(lock: Path, out: Path) -> list[str]:
    """The lock's lines for the packages the image holds, written to ``out``; returns their pins."""
    lines = [line for line in lock.read_text().splitlines() if line and not line.startswith("#")]
    kept = [line for line in lines if line.split("==")[0] not in NOT_IN_IMAGE]
    out.write_text("\n".join(kept) + "\n")
    return [line.split()[0] for line in kept]


def install_python_packages(root: Path, wheels: Path, requirements: Path, project_wheel: Path) -> None:
    """The pinned wheels (hash-checked) and the project's wheel into the image's site directory."""
    site = root / SITE
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index",
           f"--find-links={wheels}", "--no-deps", "--no-compile", "--target", str(site)]  # fmt: skip
    for requirement in (["--require-hashes", "-r", str(requirements)], [str(project_wheel)]):
        subprocess.run([*pip, *requirement], check=True)
        # bin/ holds scripts for the build machine's Python; direct_url.json names the wheel's build path.
        shutil.rmtree(site / "bin", ignore_errors=True)
    for leftover in site.glob("*.dist-info/direct_url.json"):
        record = leftover.with_name("RECORD")
        kept = [
            line
            for line in record.read_text().splitlines()
            if not line.startswith(f"{leftover.parent.name}/direct_url.json,")
        ]
        record.write_text("\n".join(kept) + "\n")
        leftover.unlink()
    for pattern in TOOLING_PATHS:
        for path in sorted(site.glob(pattern)):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    record = next(site.glob("function_dynamo-*.dist-info/RECORD"))
    kept = [line for line in record.read_text().splitlines() if not _is_tooling(line.split(",")[0])]
    record.write_text("\n".join(kept) + "\n")
    launcher = root / LAUNCHER
    launcher.parent.mkdir(parents=True, exist_ok=True)
    launcher.write_text(LAUNCHER_TEXT)
    launcher.chmod(0o755)


def _is_tooling(path: str) -> bool:
    return any(fnmatch.fnmatch(path, pattern) or path.startswith(f"{pattern}/") for pattern in TOOLING_PATHS)


def byte_compile(root: Path) -> None:
    """Hash-checked .pyc for the standard library and the site directory (valid whatever the file times).

    A fixed hash seed keeps set constants in one order, so the bytes are the same on every build."""
    if sys.version_info[:2] != (3, 11):
        raise SystemExit("byte-compiling for the image's CPython 3.11 needs a 3.11 interpreter to build")
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    for tree in (Path("usr/lib/python3.11"), SITE):
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "-q", "-j", "1", "--invalidation-mode", "unchecked-hash",
             "-d", f"/{tree}", str(root / tree)],
            check=True, env=env,
        )  # fmt: skip

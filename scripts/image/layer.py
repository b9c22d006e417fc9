"""One image layer from a directory tree, byte for byte the same on every build.

Entries are sorted by path; every entry is owned by root (uid and gid 0, no names; the function writes
no files, so its user owns none), has the build's epoch as its time and the permission bits of the file
on disk; hard links are written as regular files. The tar stream is
uncompressed (the registry push compresses), so its sha256 is both the layer digest and the diff ID.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Layer:
    path: Path
    digest: str  # "sha256:<hex>"
    size: int  # bytes of the tar stream
    content_size: int  # bytes of the files in it


def _entries(root: Path) -> list[Path]:
    out = []
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        base = Path(directory)
        out.extend(base / name for name in [*dirs, *sorted(files)])
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


def _info(root: Path, path: Path, epoch: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(path.relative_to(root).as_posix())
    st = path.lstat()
    info.mtime = epoch
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        info.type = tarfile.SYMTYPE
        info.linkname = os.readlink(path)
    elif stat.S_ISDIR(st.st_mode):
        info.type = tarfile.DIRTYPE
    elif stat.S_ISREG(st.st_mode):
        info.type = tarfile.REGTYPE
        info.size = st.st_size
    else:
        raise SystemExit(f"{path}: only files, directories and symbolic links belong in the image")
    return info


def write_layer(root: Path, out: Path, epoch: int) -> Layer:
    content = 0
    with out.open("wb") as raw, tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in _entries(root):
            info = _info(root, path, epoch)
            if info.isreg():
                content += info.size
                with path.open("rb") as data:
                    tar.addfile(info, data)
            else:
                tar.addfile(info)
    digest = hashlib.sha256()
    with out.open("rb") as data:
        for chunk in iter(lambda: data.read(1 << 20), b""):
            digest.update(chunk)
    return Layer(out, f"sha256:{digest.hexdigest()}", out.stat().st_size, content)

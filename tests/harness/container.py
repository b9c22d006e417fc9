"""Run the Function package's embedded runtime image as a container without a daemon: the image is read
out of the ``.xpkg`` (a ``docker save`` tarball), its layers unpacked into an OCI runtime bundle, and
``runc`` runs it with the image's entrypoint, environment and user, a read-only root file system, no
capabilities, and the host's network namespace so it can listen on a loopback port."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import signal
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from harness.poll import until

CERTS_IN_CONTAINER = "/tls/server"
IMAGE_USER = 65532  # the image's non-root user (scripts/image/rootfs.py), who must be able to read the certs


@dataclass(frozen=True)
class Image:
    config: dict[str, Any]  # the image config ("config" holds Entrypoint, Env, User, Labels)
    rootfs: Path
    layers: int


def _layer_stream(tar: tarfile.TarFile, name: str) -> BinaryIO:
    member = tar.extractfile(name)
    assert member is not None, name
    head = member.read(2)
    member.seek(0)
    return gzip.GzipFile(fileobj=member) if head == b"\x1f\x8b" else member  # type: ignore[return-value]


def unpack_xpkg(xpkg: Path, rootfs: Path) -> Image:
    """The image inside ``xpkg``, its layers applied in order to ``rootfs`` (no whiteouts: one build layer and
    the package layer)."""
    rootfs.mkdir(parents=True)
    with tarfile.open(xpkg) as outer:
        manifest_member = outer.extractfile("manifest.json")
        assert manifest_member is not None
        (entry,) = json.load(manifest_member)
        config_member = outer.extractfile(entry["Config"])
        assert config_member is not None
        config = json.load(config_member)
        for name in entry["Layers"]:
            with tarfile.open(fileobj=_layer_stream(outer, name), mode="r|") as layer:
                for member in layer:
                    if Path(member.name).name.startswith(".wh."):
                        raise AssertionError(f"unexpected whiteout {member.name} in {name}")
                    layer.extract(member, rootfs, set_attrs=True, filter="tar")
    return Image(config, rootfs, len(entry["Layers"]))


def _mount(destination: str, kind: str, source: str, *options: str) -> dict[str, Any]:
    return {"destination": destination, "type": kind, "source": source, "options": list(options)}


def runtime_spec(image: Image, args: list[str], certs: Path) -> dict[str, Any]:
    """An OCI runtime config for ``image``: its entrypoint plus ``args``, as its user, read-only, no privileges."""
    cfg = image.config["config"]
    uid, gid = (int(part) for part in cfg["User"].split(":"))
    return {
        "ociVersion": "1.0.2",
        "process": {
            "terminal": False,
            "user": {"uid": uid, "gid": gid},
            "args": [*cfg["Entrypoint"], *(cfg.get("Cmd") or []), *args],
            "env": cfg["Env"],
            "cwd": cfg.get("WorkingDir") or "/",
            "capabilities": {"bounding": [], "effective": [], "inheritable": [], "permitted": [], "ambient": []},
            "noNewPrivileges": True,
            "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
        },
        "root": {"path": str(image.rootfs), "readonly": True},
        "hostname": "function-dynamo",
        "mounts": [
            _mount("/proc", "proc", "proc"),
            _mount("/dev", "tmpfs", "tmpfs", "nosuid", "strictatime", "mode=755", "size=65536k"),
            _mount("/dev/pts", "devpts", "devpts", "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"),
            _mount("/dev/shm", "tmpfs", "shm", "nosuid", "noexec", "nodev", "mode=1777", "size=65536k"),
            _mount("/sys", "sysfs", "sysfs", "nosuid", "noexec", "nodev", "ro"),
            _mount("/tmp", "tmpfs", "tmpfs", "nosuid", "nodev", "mode=1777"),
            _mount(CERTS_IN_CONTAINER, "bind", str(certs), "rbind", "ro"),
        ],
        "linux": {
            # No network namespace: the server's loopback port is the host's (it binds 127.0.0.1 only).
            "namespaces": [{"type": t} for t in ("pid", "ipc", "uts", "mount")],
            "maskedPaths": ["/proc/kcore", "/proc/keys", "/proc/timer_list", "/sys/firmware"],
            "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"],
        },
    }


@dataclass
class Running:
    name: str
    pid: int  # the container's init process (the server), as the host sees it
    log: Path


# runc, not crun: crun refuses this machine's cgroup v1 hierarchy ("cgroups in hybrid mode not supported").
RUNTIME = "runc"


def _runtime(state: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RUNTIME, f"--root={state}", *args], capture_output=True, text=True, check=check)


def readable_by_image(certs: Path) -> None:
    """The certificate directory and files owned by the image's user, who reads them through the bind mount."""
    for path in (certs, *certs.iterdir()):
        os.chown(path, IMAGE_USER, IMAGE_USER)


def prepare(bundle: Path, spec: dict[str, Any], name: str) -> list[str]:
    """Write the bundle's config.json; returns the command that runs the container ``name`` in the foreground."""
    (bundle / "config.json").write_text(json.dumps(spec, indent=2))
    (bundle / "state").mkdir(exist_ok=True)
    return [RUNTIME, f"--root={bundle / 'state'}", "run", f"--bundle={bundle}", name]


def delete(bundle: Path, name: str) -> None:
    """Remove the container ``name`` of the bundle, running or not."""
    _runtime(bundle / "state", "delete", "--force", name, check=False)


@contextlib.contextmanager
def running(bundle: Path, spec: dict[str, Any], name: str) -> Iterator[Running]:
    """``runc run`` the bundle until the block ends; then the server is stopped and the container deleted."""
    argv = prepare(bundle, spec, name)
    state, log = bundle / "state", bundle / "container.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    pid = 0

    def started() -> int:
        found = _runtime(state, "state", name, check=False)
        return int(json.loads(found.stdout).get("pid") or 0) if found.returncode == 0 else 0

    def exited() -> str | None:
        return None if proc.poll() is None else f"{RUNTIME} exited with {proc.returncode}"

    try:
        pid = until("the container started", started, 20, every=0.1, stop=exited, where=log.read_text)
        yield Running(name, pid, log)
    finally:
        _runtime(state, "kill", name, "TERM", check=False)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            if pid > 0:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)  # the server, by its PID
            proc.wait(timeout=10)
        delete(bundle, name)
        shutil.rmtree(state, ignore_errors=True)

"""Where the tests find the external tools and data they need.

Tools live in a cache outside the repo, filled by ``scripts/install-tools.sh``:

    ${FUNCTION_DYNAMO_CACHE:-~/.cache/function-dynamo}/
        bin/crank-<version>   the Crossplane CLI
        crds/<name>/*.yaml    CRDs of the APIs we render into (grove, lws, istio, gaie, ...)
        tools.env             CRANK=... and CRDS_DIR=... (KEY=VALUE lines)

Shared data (upstream Dynamo CRDs, the corpus) lives in ``../shared`` beside the checkout.

The ``require_*`` helpers skip a test whose prerequisite is missing, naming the piece and
the command that installs it, except under CI (env ``CI=true``), where they fail instead so
that CI never passes by silently skipping.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NoReturn

import pytest

from functions.tooling.cache import cache_dir as tooling_cache_dir

REPO_ROOT = Path(__file__).resolve().parents[1]
INSTALL_TOOLS = "scripts/install-tools.sh"

# Short names of the CRD sets install-tools.sh knows about.
CRD_SETS = ("grove", "lws", "istio", "gaie")


def in_ci() -> bool:
    """True when running under CI (env CI=true)."""
    return os.environ.get("CI", "").strip().lower() == "true"


def cache_dir() -> Path:
    """The tools cache: $FUNCTION_DYNAMO_CACHE or ~/.cache/function-dynamo (the tooling's own)."""
    return tooling_cache_dir()


def shared_dir() -> Path:
    """The shared data dir beside the checkout: <repo>/../shared."""
    return REPO_ROOT.parent / "shared"


def _tools_env() -> dict[str, str]:
    """KEY=VALUE pairs from <cache>/tools.env, or {} when it is absent."""
    path = cache_dir() / "tools.env"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    return values


def pinned_version(name: str = "CROSSPLANE_VERSION") -> str | None:
    """A version pinned in scripts/install-tools.sh (the one place each is set): Crossplane core's by default,
    ``CRANK_VERSION`` for the CLI."""
    try:
        text = (REPO_ROOT / INSTALL_TOOLS).read_text(encoding="utf-8")
    except OSError:
        return None
    match = re.search(rf"^{name}=(\S+)", text, re.MULTILINE)
    return match.group(1).strip("'\"") if match else None


def project_version() -> str:
    """pyproject.toml's version (``0.1.0``); the packages of this checkout carry it with a ``v``."""
    found = re.search(r'^version = "(.*)"$', (REPO_ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert found, "pyproject.toml has no version"
    return found.group(1)


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def crank_path() -> Path | None:
    """The crank binary: CRANK from tools.env, else the default cache location; None if missing."""
    env_crank = _tools_env().get("CRANK")
    if env_crank and _is_executable(Path(env_crank)):
        return Path(env_crank)
    version = pinned_version("CRANK_VERSION")
    if version:
        default = cache_dir() / "bin" / f"crank-{version}"
        if _is_executable(default):
            return default
    return None


def _crds_root() -> Path:
    """CRDS_DIR from tools.env, else <cache>/crds."""
    base = _tools_env().get("CRDS_DIR")
    return Path(base) if base else cache_dir() / "crds"


def crds_dir(name: str) -> Path | None:
    """<CRDS_DIR>/<name> if it holds at least one *.yaml; None otherwise."""
    path = _crds_root() / name
    if path.is_dir() and any(path.glob("*.yaml")):
        return path
    return None


def _missing(reason: str) -> NoReturn:
    """Skip the current test, or fail it under CI."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: missing prerequisites fail instead of skipping)", pytrace=False)
    pytest.skip(reason)


def require_crank() -> Path:
    """The crank binary, or skip (fail under CI) naming how to install it."""
    path = crank_path()
    if path is None:
        _missing(
            f"crank not built (looked in {cache_dir() / 'tools.env'} and {cache_dir() / 'bin'}): run {INSTALL_TOOLS}"
        )
    return path


def require_crds(name: str) -> Path:
    """The directory of CRD YAMLs for ``name`` (grove, lws, istio, gaie), or skip/fail."""
    path = crds_dir(name)
    if path is None:
        _missing(f"CRDs for {name!r} not installed (no *.yaml in {_crds_root() / name}): run {INSTALL_TOOLS}")
    return path


def require_tools_file(key: str) -> Path:
    """A path tools.env names (e.g. CROSSPLANE_CRDS), or skip/fail naming how to install it."""
    value = _tools_env().get(key)
    if not value or not Path(value).exists():
        _missing(f"{key} not installed (see {cache_dir() / 'tools.env'}): run {INSTALL_TOOLS}")
    return Path(value)


def require_shared(*parts: str) -> Path:
    """<repo>/../shared (or a path inside it, e.g. require_shared("corpus")), or skip/fail."""
    path = shared_dir().joinpath(*parts)
    if not path.exists():
        _missing(
            f"shared data missing: {path} not found (../shared must be laid beside the checkout; CI always provides it)"
        )
    return path


def crank_render(*args: str) -> str:
    """stdout of `crank render ARGS...` (the real Crossplane CLI), failing the test on a non-zero exit."""
    import subprocess

    proc = subprocess.run([str(require_crank()), "render", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def crank_render_objects(
    work: Path, functions_file: Path, xr: dict, composition: dict, required: list[dict] | None = None
) -> str:
    """``crank render`` of ``xr`` through ``composition``, the objects written to files in ``work`` first."""
    import yaml

    for name, obj in (("xr", xr), ("composition", composition)):
        (work / f"{name}.yaml").write_text(yaml.safe_dump(obj))
    extra: list[str] = []
    if required:
        (work / "required.yaml").write_text(yaml.safe_dump_all(required))
        extra = ["-e", str(work / "required.yaml")]
    return crank_render(str(work / "xr.yaml"), str(work / "composition.yaml"), str(functions_file), *extra)


def regenerated(folder: Path, patterns: tuple[str, ...] = ("*.yaml",)) -> tuple[dict[Path, str], dict[Path, str]]:
    """The files of ``folder`` before and after running its ``regenerate.py`` (which must succeed)."""
    import subprocess
    import sys

    def files() -> dict[Path, str]:
        return {p: p.read_text() for pattern in patterns for p in sorted(folder.rglob(pattern))}

    before = files()
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, str(folder / "regenerate.py")], capture_output=True, text=True, cwd=repo)
    assert done.returncode == 0, done.stderr
    return before, files()

"""The CLI as a user installs it: the wheel ``scripts/build-dist.sh`` builds (the one a release ships), installed
with its tooling extra into a new venv outside the checkout, run from another directory with a fresh home.

``render``, ``validate``, ``export`` and ``--version`` must work from what the wheel carries (the XRDs and
Compositions included), and print what the checkout's CLI prints. The wheel's dependencies are built once into a
wheelhouse under the cache, keyed by their list, so a second run installs offline in seconds.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from fixtures.tooling import _missing, cache_dir, project_version

REPO = Path(__file__).resolve().parents[1]
CHECKOUT_CLI = REPO / ".venv" / "bin" / "function-dynamo"
EXAMPLE = REPO / "examples" / "dgd" / "vllm-agg.yaml"
REQUEST = REPO / "examples" / "dgdr" / "trtllm-review.yaml"
PROFILED = REPO / "tests" / "scenarios" / "dgdr-states" / "ready" / "required.yaml"


def _run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kwargs)  # type: ignore[call-overload,no-any-return]


def _built_wheel(out: Path) -> Path:
    built = _run(
        ["bash", str(REPO / "scripts" / "build-dist.sh"), str(out)], env={**os.environ, "PYTHON": sys.executable}
    )
    if built.returncode != 0 and "pyproject.toml pins" in built.stderr:
        _missing(built.stderr.strip())  # this environment's setuptools is not the pinned one
    assert built.returncode == 0, built.stderr
    (wheel,) = out.glob("function_dynamo-*.whl")
    return wheel


def _constraints(tmp: Path) -> Path:
    """requirements.lock's pins without their hashes: the versions the checkout's venv and the image hold."""
    lines = [line.split(" --hash=")[0] for line in (REPO / "requirements.lock").read_text().splitlines()]
    path = tmp / "constraints.txt"
    path.write_text("\n".join(line for line in lines if line and not line.startswith("#")) + "\n")
    return path


def _wheelhouse(wheel: Path, constraints: Path) -> Path:
    """The wheel's dependencies (its tooling extra's too) as wheels, built once per list of them."""
    with zipfile.ZipFile(wheel) as whl:
        metadata = whl.read(next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    requires = sorted(line for line in metadata.splitlines() if line.startswith("Requires-Dist:"))
    key = hashlib.sha256("\n".join([sys.version, constraints.read_text(), *requires]).encode()).hexdigest()[:16]
    house = cache_dir() / "wheelhouse" / key
    house.parent.mkdir(parents=True, exist_ok=True)
    with (house.parent / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run may be filling it
        if not (house / ".complete").is_file():
            shutil.rmtree(house, ignore_errors=True)
            fetched = _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
                            "-c", str(constraints), "-w", str(house), f"{wheel}[tooling]"])  # fmt: skip
            if fetched.returncode != 0:
                _missing(
                    f"the wheel's dependencies could not be fetched from the package index: {fetched.stderr[-500:]}"
                )
            for ours in house.glob("function_dynamo-*.whl"):
                ours.unlink()
            (house / ".complete").touch()
    return house


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment of a user who installed the wheel: its venv's bin first on PATH, a home of their own and no
    PYTHONPATH. Nothing of the checkout is importable."""
    tmp = tmp_path_factory.mktemp("wheel-install")
    assert not tmp.resolve().is_relative_to(REPO)
    wheel = _built_wheel(tmp / "dist")
    venv = tmp / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    assert made.returncode == 0, made.stderr
    constraints = _constraints(tmp)
    installed = _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
                      "--disable-pip-version-check", "--no-index", "--find-links", str(_wheelhouse(wheel, constraints)),
                      "-c", str(constraints), f"{wheel}[tooling]"])  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    home = tmp / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FUNCTION_DYNAMO_CACHE", "VIRTUAL_ENV")}
    yield {**env, "PATH": f"{venv / 'bin'}:{env.get('PATH', '')}", "HOME": str(home), "CWD": str(home)}


def cli(user: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``function-dynamo ARGS`` as the user runs it, from their home."""
    return _run(["function-dynamo", *args], cwd=user["CWD"], env=user)


def copied(user: dict[str, str], *sources: Path) -> list[str]:
    for source in sources:
        shutil.copy(source, Path(user["CWD"], source.name))
    return [source.name for source in sources]


def test_the_cli_runs_from_the_wheel_not_the_checkout(user: dict[str, str]) -> None:
    found = _run(["python", "-c", "import functions.tooling.data_dirs as d; print(d.data_root())"],
                 cwd=user["CWD"], env=user)  # fmt: skip
    assert found.returncode == 0, found.stderr
    root = Path(found.stdout.strip())
    assert root.name == "_data" and "site-packages" in root.parts and not root.is_relative_to(REPO), root
    assert sorted(p.name for p in (root / "xrds").glob("*.yaml")) == sorted(
        p.name for p in (REPO / "xrds").glob("*.yaml")
    )


def test_version(user: dict[str, str]) -> None:
    shown = cli(user, "--version")
    assert (shown.returncode, shown.stdout) == (0, f"function-dynamo {project_version()}\n"), shown.stderr


@pytest.mark.parametrize("args", [[], ["--claims"]], ids=["namespaced-xr", "claim"])
def test_render_prints_what_the_checkouts_cli_prints(user: dict[str, str], args: list[str]) -> None:
    (example,) = copied(user, EXAMPLE)
    rendered = cli(user, "render", example, *args)
    assert rendered.returncode == 0, rendered.stderr
    kinds = [doc["kind"] for doc in yaml.safe_load_all(rendered.stdout) if doc]
    assert kinds[0] == ("XDynamoGraphDeployment" if args else "DynamoGraphDeployment")
    assert "PodCliqueSet" in kinds
    if CHECKOUT_CLI.is_file():
        expected = _run([str(CHECKOUT_CLI), "render", example, *args], cwd=user["CWD"])
        assert rendered.stdout == expected.stdout


def test_validate_judges_with_the_packaged_xrds(user: dict[str, str]) -> None:
    (example,) = copied(user, EXAMPLE)
    valid = cli(user, "validate", example)
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert "1 valid, 0 invalid" in valid.stdout
    doc = yaml.safe_load(EXAMPLE.read_text())
    doc["spec"]["backendFramework"] = "llama"
    Path(user["CWD"], "bad.yaml").write_text(yaml.safe_dump(doc))
    invalid = cli(user, "validate", "bad.yaml")
    assert invalid.returncode == 1, invalid.stdout + invalid.stderr
    assert "spec.backendFramework" in invalid.stdout


def test_export_prints_the_generated_graph(user: dict[str, str]) -> None:
    (request,) = copied(user, REQUEST)
    docs = yaml.safe_load_all(PROFILED.read_text())
    Path(user["CWD"], "output.yaml").write_text(yaml.safe_dump(next(d for d in docs if d["kind"] == "ConfigMap")))
    exported = cli(user, "export", request, "--output-configmap", "output.yaml")
    assert exported.returncode == 0, exported.stderr
    manifest = yaml.safe_load(exported.stdout)
    assert (manifest["kind"], manifest["metadata"]["name"]) == ("DynamoGraphDeployment", "qwen3-32b-trtllm")

"""Hostile input to ``validate`` and ``render`` is refused, never a hang, a traceback or a flood.

``validate`` runs in CI on manifests from pull requests and ``render`` on files people download: each input below,
generated here, gets exit code 1 and a short message naming the field (or file), on both commands. The bounds are
``functions/tooling/input_bounds.py``'s; the alias and depth bombs run as subprocesses with a timeout, so that a
regression fails instead of hanging the suite.
"""

from __future__ import annotations

import copy
import random
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from fixtures.mutations import with_value
from fixtures.tooling import REPO
from functions.tooling.input_bounds import (
    MAX_FILE_BYTES,
    MAX_OBJECT_BYTES,
    MAX_RESOURCE_DEPTH,
    InputRefused,
    check_request_depth,
)
from functions.tooling.main import cli

MAX_OUTPUT = 2000  # characters of stdout and stderr together
BOMB_TIMEOUT = 20  # seconds


def example(path: str) -> dict[str, Any]:
    return yaml.safe_load((REPO / "examples" / path).read_text())


AGG = example("dgd/vllm-agg.yaml")
GAIE = example("dgd/vllm-gaie.yaml")  # an EPP component: its plugins' parameters are free-form
ALPHA = example("v1alpha1/vllm-disagg.yaml")
ALPHA_DCD = example("v1alpha1/dcd-frontend.yaml")


def nested(levels: int, leaf: Any = "x") -> Any:
    value = leaf
    for i in range(levels):
        value = {f"k{i}": value}
    return value


def renamed_service(doc: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["spec"]["services"][new] = out["spec"]["services"].pop(old)
    return out


def dump(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


EPP_PARAMETERS = ["spec", "components", 0, "eppConfig", "config", "plugins", 1, "parameters"]
EPP_PATH = "spec.components[0].eppConfig.config.plugins[1].parameters"


def alias_bomb() -> str:
    """Billion laughs: nine levels of nine aliases, a few hundred bytes that expand to 9^9 strings."""
    lines = [
        "apiVersion: nvidia.com/v1beta1",
        "kind: DynamoGraphDeployment",
        "metadata:",
        "  name: bomb",
        "  namespace: demo",
        "  annotations:",
        '    a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    ]
    lines += [f"    a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    return "\n".join([*lines, "spec:", "  backendFramework: vllm", "  bomb: *a9", ""])


def depth_bomb(levels: int = 500) -> str:
    """Lists nested ``levels`` deep: under libyaml's own cap (1000), over Python's recursion limit."""
    return f"{dump({**AGG, 'spec': {}})}".replace("spec: {}", f"spec:\n  x: {'[' * levels}{']' * levels}")


@dataclass(frozen=True)
class Case:
    """A hostile manifest (``text``, or ``build(tmp_path)`` writing files), the args after the command, and what
    the output must name."""

    text: str | None
    names: tuple[str, ...]
    commands: tuple[str, ...] = ("validate", "render")
    build: Callable[[Path], list[str]] | None = None


def placed(doc: dict[str, Any], path: list[str | int], text: str) -> str:
    """``doc`` as YAML with ``text`` written at ``path`` as it is (written by hand: PyYAML's emitter takes
    seconds for a value of megabytes)."""
    return dump(with_value(doc, path, "PLACEHOLDER")).replace("PLACEHOLDER", text, 1)


def big_arg(size: int) -> str:
    return placed(AGG, ["spec", "components", 1, "podTemplate", "spec", "containers", 0, "args"], f"[{'x' * size}]")


def with_required(doc: str) -> Callable[[Path], list[str]]:
    """render of the example DGD with ``-e`` a file of two documents, the first ``doc``."""

    def build(tmp: Path) -> list[str]:
        required = tmp / "required.yaml"
        required.write_text(f"{doc}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n")
        return [str(REPO / "examples" / "dgd" / "vllm-agg.yaml"), "-e", str(required)]

    return build


def with_observed(doc: str) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        observed = tmp / "observed.yaml"
        observed.write_text(doc)
        return [str(REPO / "examples" / "dgd" / "vllm-agg.yaml"), "--observed-resources", str(observed)]

    return build


CONFIG = (REPO / "examples" / "operator-config.yaml").read_text()

CASES: dict[str, Case] = {
    "protobuf-depth free-form value 35 levels": Case(
        dump(with_value(GAIE, EPP_PARAMETERS, nested(35))), (EPP_PATH, "protobuf decodes 100 nested messages")
    ),
    "integer of 400 digits": Case(
        dump(AGG).replace("replicas: 1", "replicas: " + "9" * 400, 1),
        ("spec.components[0].replicas (line", "out of range", "(400 characters)"),
    ),
    "integer just past int64": Case(
        dump(with_value(GAIE, EPP_PARAMETERS, {"n": 2**63})), (f"{EPP_PATH}.n", "out of range")
    ),
    "integer of 5000 digits": Case(dump(AGG).replace("replicas: 1", "replicas: " + "9" * 5000, 1), ("out of range",)),
    ".inf in a free-form value": Case(
        dump(with_value(GAIE, EPP_PARAMETERS, {"x": "INF"})).replace("x: INF", "x: .inf"),
        (f"{EPP_PATH}.x (line", ".inf is infinite"),
    ),
    ".nan in a free-form value": Case(
        dump(with_value(GAIE, EPP_PARAMETERS, {"x": "NAN"})).replace("x: NAN", "x: .nan"),
        (f"{EPP_PATH}.x (line", ".nan is not a number"),
    ),
    "50 MB string in args": Case(
        None,
        ("the file is 47.7 MiB", f"over the 4.0 MiB ({MAX_FILE_BYTES:,} bytes)"),
        build=lambda tmp: [str(write(tmp / "args.yaml", big_arg(50_000_000)))],
    ),
    "2 MB string in args": Case(
        big_arg(2_000_000),
        ("spec.components[1].podTemplate.spec.containers[0].args[0] (line", "2,000,000 characters", "1.5 MiB"),
    ),
    "400,000 short strings": Case(
        placed(GAIE, EPP_PARAMETERS, "{many: [" + ",".join(["x"] * 400_000) + "]}"),
        ("the document at line 1", "as JSON", f"over the 1.5 MiB ({MAX_OBJECT_BYTES:,} bytes)"),
    ),
    "50 MB name": Case(
        None,
        ("the file is 47.7 MiB",),
        build=lambda tmp: [str(write(tmp / "name.yaml", placed(AGG, ["metadata", "name"], "n" * 50_000_000)))],
    ),
    "1 MB name, echoed in part": Case(
        dump(with_value(AGG, ["metadata", "name"], "n" * 1_000_000)), ("metadata.name", "(1,000,000 characters)")
    ),
    "a Cyrillic letter in a service name": Case(
        dump(renamed_service(ALPHA, "Frontend", "Front\u0435nd")),
        ("spec.services.Front\u0435nd", "U+0435 CYRILLIC SMALL LETTER IE", "DNS-1123"),
    ),
    "a right-to-left mark in a service name": Case(
        dump(renamed_service(ALPHA, "Frontend", "Front\u200fend")),
        ("spec.services.Front\\u200fend", "U+200F RIGHT-TO-LEFT MARK"),
    ),
    "a Cyrillic letter in a DCD's serviceName": Case(
        dump(with_value(ALPHA_DCD, ["spec", "serviceName"], "Front\u0435nd")),
        ("spec.serviceName", "U+0435 CYRILLIC SMALL LETTER IE"),
    ),
    "an alias that contains itself": Case(
        dump(AGG).replace("backendFramework: vllm", "backendFramework: vllm\n  loop: &c {self: *c}"),
        ("spec.loop.self (line", "an alias names a collection it is inside of"),
    ),
    "a !!binary value": Case(
        dump(with_value(GAIE, EPP_PARAMETERS, {"b": "B"})).replace("b: B", "b: !!binary aGVsbG8="),
        (f"{EPP_PATH}.b (line", "!!binary"),
    ),
    "a number for metadata.name in -e": Case(
        None,
        ("required.yaml#0: metadata.name: must be a non-empty string, not a number (123)",),
        commands=("render",),
        build=with_required(CONFIG.replace("name: dynamo-platform", "name: 123")),
    ),
    "a list for metadata in -e": Case(
        None,
        ("required.yaml#0: metadata: must be a mapping",),
        ("render",),
        with_required("kind: X\napiVersion: v1\nmetadata: [a]\n"),
    ),
    "a list for a document in -e": Case(
        None, ("required.yaml#0: <root>: must be a Kubernetes object",), ("render",), with_required("- a\n- b\n")
    ),
    "a timestamp for a label in --observed-resources": Case(
        None,
        ("observed.yaml#0: metadata.labels.when: must be a string",),
        ("render",),
        with_observed("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {when: 2024-01-01}\n"),
    ),
}


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def invoke(command: str, args: list[str]) -> tuple[int, str]:
    """The real command, in-process: exit code and stdout with stderr."""
    result = CliRunner().invoke(cli, [command, *args], catch_exceptions=False)
    return result.exit_code, result.output


def check_refusal(code: int, output: str, names: tuple[str, ...]) -> None:
    assert code == 1, output[:MAX_OUTPUT]
    assert "Traceback" not in output, output[:MAX_OUTPUT]
    for name in names:
        assert name in output, output[:MAX_OUTPUT]
    assert len(output) < MAX_OUTPUT, f"{len(output)} characters: {output[:MAX_OUTPUT]}"


RUNS = [(case, command) for case, spec in CASES.items() for command in spec.commands]


@pytest.mark.parametrize(("case", "command"), RUNS, ids=[f"{command}: {case}" for case, command in RUNS])
def test_hostile_input_is_refused_naming_the_field(case: str, command: str, tmp_path: Path) -> None:
    spec = CASES[case]
    args = spec.build(tmp_path) if spec.build else [str(write(tmp_path / "hostile.yaml", spec.text or ""))]
    check_refusal(*invoke(command, args), spec.names)


def run_bounded(command: str, path: Path) -> tuple[int, str]:
    """The CLI as a subprocess that must finish within ``BOMB_TIMEOUT`` seconds."""
    proc = subprocess.run(
        [sys.executable, "-m", "functions.tooling.main", command, str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=BOMB_TIMEOUT,
    )
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("command", ["validate", "render"])
@pytest.mark.parametrize(
    ("bomb", "names"),
    [
        (alias_bomb, ("metadata.annotations.a5 (line 12)", "its aliases expand it", "1.5 MiB")),
        (depth_bomb, ("spec.x[0][0]", "(line 7)", "nested more than 100 levels deep")),
    ],
    ids=["alias bomb", "depth bomb"],
)
def test_bombs_are_refused_in_seconds(
    bomb: Callable[[], str], names: tuple[str, ...], command: str, tmp_path: Path
) -> None:
    check_refusal(*run_bounded(command, write(tmp_path / "bomb.yaml", bomb())), names)


def test_a_value_at_the_depth_protobuf_carries_renders(tmp_path: Path) -> None:
    """The deepest free-form value the bound lets through renders; one level more is refused."""
    deepest = max(n for n in range(40) if _fits(with_value(GAIE, EPP_PARAMETERS, nested(n))))
    code, output = invoke(
        "render", [str(write(tmp_path / "ok.yaml", dump(with_value(GAIE, EPP_PARAMETERS, nested(deepest)))))]
    )
    assert code == 0, output[-MAX_OUTPUT:]
    code, output = invoke(
        "validate", [str(write(tmp_path / "deep.yaml", dump(with_value(GAIE, EPP_PARAMETERS, nested(deepest + 1)))))]
    )
    check_refusal(code, output, (EPP_PATH, "protobuf"))


def _fits(doc: Any) -> bool:
    try:
        check_request_depth(doc)
    except InputRefused:
        return False
    return True


def _decodes(doc: Any, where: str) -> bool:
    """Whether protobuf decodes a RunFunctionRequest carrying ``doc`` as a ``where`` resource."""
    req = fnv1.RunFunctionRequest()
    if where == "observed":
        req.observed.resources["r"].resource.update(doc)
    elif where == "desired":
        req.desired.resources["r"].resource.update(doc)
    else:
        req.required_resources["r"].items.add().resource.update(doc)
    try:
        fnv1.RunFunctionRequest.FromString(req.SerializeToString())
    except Exception:  # upb's DecodeError: nested too deeply
        return False
    return True


@pytest.mark.parametrize("where", ["observed", "desired", "required"])
def test_the_depth_bound_is_what_protobuf_decodes(where: str) -> None:
    """``check_request_depth`` (``MAX_RESOURCE_DEPTH``) refuses exactly what protobuf cannot decode in a request:
    objects and lists nested in any order, ending in a scalar or an empty container, around the limit."""
    rng = random.Random(7)
    leaves: list[Any] = [1, "s", {}, [], {"a": 1}, [1]]
    seen = {True: 0, False: 0}
    for _ in range(150):
        shape = "o" + "".join(rng.choice("ol") for _ in range(rng.randint(25, 50)))
        value: Any = rng.choice(leaves)
        for kind in reversed(shape):
            value = {"k": value} if kind == "o" else [value]
        fits = _fits(value)
        assert fits == _decodes(value, where), (shape, MAX_RESOURCE_DEPTH)
        seen[fits] += 1
    assert seen[True] and seen[False]  # both sides of the limit were tried

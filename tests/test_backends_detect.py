"""Backend detection, resolution and vLLM executor choice (docs/upstream/operator.md §1.3, §2.4; upstream graph.go,
backend_vllm.go,
featuregate/operator_origin.go)."""

from __future__ import annotations

import pytest

from functions.kube.backends import (
    EXECUTOR_ANNOTATION,
    ORIGIN_VERSION_ANNOTATION,
    BackendError,
    detect_backend,
    executor_backend,
    resolve_backend,
)


def _c(command: list[str] | None = None, args: list[str] | None = None) -> dict:
    container: dict = {"name": "main"}
    if command is not None:
        container["command"] = command
    if args is not None:
        container["args"] = args
    return container


@pytest.mark.parametrize(
    ("container", "expected"),
    [
        pytest.param(_c(["python3", "-m", "dynamo.vllm"]), "vllm", id="python-command"),
        pytest.param(_c(["python3"], ["-m", "dynamo.sglang", "--tp", "2"]), "sglang", id="module-in-args"),
        pytest.param(_c(["/bin/sh", "-c"], ["python3 -m dynamo.trtllm --x 1"]), "trtllm", id="shell-c-string"),
        pytest.param(_c(["/bin/sh", "-c"], ["pip list && python3.11 -m dynamo.vllm"]), "vllm", id="after-operator"),
        pytest.param(_c(None, ["python", "-u", "-m", "dynamo.sglang.worker"]), "sglang", id="args-only-submodule"),
        pytest.param(_c(["python3", "-m", "dynamo.frontend"]), None, id="frontend-module"),
        pytest.param(_c(["python3", "-m", "vllm.entrypoints.openai"]), None, id="plain-vllm-not-dynamo"),
        # "-m" and the module must not be separated from python by a shell operator
        pytest.param(_c(["/bin/sh", "-c"], ["python3 setup.py; -m dynamo.vllm"]), None, id="operator-between"),
        pytest.param(_c(["/bin/sh", "-c"], ["echo dynamo.vllm"]), None, id="no-python"),
        pytest.param(_c(), None, id="empty"),
    ],
)
def test_detect_backend(container: dict, expected: str | None) -> None:
    assert detect_backend(container) == expected


def test_detect_backend_multiple_detections_name_both() -> None:
    container = _c(["/bin/sh", "-c"], ["python3 -m dynamo.vllm & python3 -m dynamo.sglang"])
    with pytest.raises(BackendError) as info:
        detect_backend(container)
    assert "multiple backend frameworks" in str(info.value)
    assert "vllm" in str(info.value)
    assert "sglang" in str(info.value)


def test_backend_error_is_a_value_error() -> None:
    assert issubclass(BackendError, ValueError)


VLLM = _c(["python3", "-m", "dynamo.vllm"])
BOTH = _c(["/bin/sh", "-c"], ["python3 -m dynamo.vllm; python3 -m dynamo.trtllm"])
PLAIN = _c(["/bin/sh", "-c"], ["./serve.sh"])


@pytest.mark.parametrize(
    ("component_type", "container", "declared", "expected"),
    [
        pytest.param("frontend", VLLM, "sglang", "noop", id="non-worker-is-noop-even-with-mismatch"),
        pytest.param("planner", VLLM, None, "noop", id="planner-noop"),
        pytest.param(None, VLLM, None, "noop", id="no-type-noop"),
        pytest.param("worker", VLLM, None, "vllm", id="worker-detected"),
        pytest.param("prefill", VLLM, "vllm", "vllm", id="prefill-detected-equals-declared"),
        pytest.param("decode", PLAIN, "trtllm", "trtllm", id="decode-declared-when-nothing-detected"),
        pytest.param("worker", PLAIN, None, "noop", id="neither-is-noop"),
        pytest.param("worker", PLAIN, "", "noop", id="empty-declared-is-unset"),
        # upstream determineBackendFramework: a failed detection falls back to the declared framework
        pytest.param("worker", BOTH, "sglang", "sglang", id="multiple-detections-fall-back-to-declared"),
    ],
)
def test_resolve_backend(component_type: str | None, container: dict, declared: str | None, expected: str) -> None:
    assert resolve_backend(component_type, container, declared) == expected


def test_resolve_backend_mismatch_names_both() -> None:
    with pytest.raises(BackendError) as info:
        resolve_backend("worker", VLLM, "sglang")
    message = str(info.value)
    assert "mismatch" in message
    assert "'vllm'" in message
    assert "'sglang'" in message


def test_resolve_backend_multiple_detections_without_declared_fails() -> None:
    with pytest.raises(BackendError, match="could not determine backend framework: multiple backend frameworks"):
        resolve_backend("decode", BOTH, None)


def test_resolve_backend_rejects_unknown_declared() -> None:
    with pytest.raises(BackendError, match="unsupported backend framework 'tgi'"):
        resolve_backend("worker", PLAIN, "tgi")


@pytest.mark.parametrize(
    ("service", "graph", "expected"),
    [
        pytest.param({}, {}, "ray", id="nothing-is-ray"),
        pytest.param(None, None, "ray", id="none-is-ray"),
        pytest.param({}, {ORIGIN_VERSION_ANNOTATION: "1.0.0"}, "mp", id="origin-1.0.0-mp"),
        pytest.param({}, {ORIGIN_VERSION_ANNOTATION: "2.3.1"}, "mp", id="origin-above-mp"),
        pytest.param({}, {ORIGIN_VERSION_ANNOTATION: "v1.1"}, "mp", id="origin-lenient-v-prefix-partial"),
        pytest.param({}, {ORIGIN_VERSION_ANNOTATION: "1.0.0+build.5"}, "mp", id="origin-build-metadata-ignored"),
        pytest.param({}, {ORIGIN_VERSION_ANNOTATION: "0.9.0"}, "ray", id="origin-below-ray"),
        pytest.param({}, {ORIGIN_VERSION_ANNOTATION: "0.9.0-dev"}, "ray", id="prerelease-below-ray"),
        pytest.param({}, {ORIGIN_VERSION_ANNOTATION: "1.0.0-rc1"}, "ray", id="prerelease-of-1.0.0-ray"),
        pytest.param({}, {ORIGIN_VERSION_ANNOTATION: "0.0.0-unknown"}, "ray", id="fallback-version-ray"),
        pytest.param({}, {ORIGIN_VERSION_ANNOTATION: "not-a-version"}, "ray", id="invalid-origin-ray"),
        pytest.param({}, {EXECUTOR_ANNOTATION: "mp"}, "mp", id="graph-explicit-mp"),
        pytest.param({EXECUTOR_ANNOTATION: "MP"}, {}, "mp", id="explicit-case-insensitive"),
        pytest.param(
            {EXECUTOR_ANNOTATION: "ray"}, {EXECUTOR_ANNOTATION: "mp"}, "ray", id="service-explicit-wins-over-graph"
        ),
        pytest.param(
            {EXECUTOR_ANNOTATION: "RAY"}, {ORIGIN_VERSION_ANNOTATION: "1.0.0"}, "ray", id="explicit-ray-beats-version"
        ),
        pytest.param(
            {EXECUTOR_ANNOTATION: "mp"}, {ORIGIN_VERSION_ANNOTATION: "0.1.0"}, "mp", id="explicit-mp-beats-version"
        ),
        pytest.param(
            {EXECUTOR_ANNOTATION: "invalid"},
            {ORIGIN_VERSION_ANNOTATION: "1.0.0"},
            "mp",
            id="invalid-explicit-falls-through-to-version",
        ),
        pytest.param(
            {EXECUTOR_ANNOTATION: "bogus"},
            {EXECUTOR_ANNOTATION: "mp"},
            "ray",
            id="service-key-shadows-graph-even-when-invalid",
        ),
        pytest.param(
            {ORIGIN_VERSION_ANNOTATION: "0.8.0"},
            {ORIGIN_VERSION_ANNOTATION: "1.2.0"},
            "ray",
            id="service-origin-version-wins",
        ),
    ],
)
def test_executor_backend(service: dict | None, graph: dict | None, expected: str) -> None:
    assert executor_backend(service, graph) == expected

"""SGLang multinode flags (docs/upstream/operator.md §2.4, §6 case 2; upstream backend_sglang.go and
backend_sglang_test.go)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from functions.kube.backends import MultinodeRole, apply_multinode

GROVE_WORKER_LEADER = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-worker-ldr-0.$(GROVE_HEADLESS_SERVICE)"
PROBES = {
    "livenessProbe": {"httpGet": {"path": "/live", "port": "system"}, "periodSeconds": 5},
    "readinessProbe": {"httpGet": {"path": "/health", "port": "system"}, "periodSeconds": 10},
    "startupProbe": {"httpGet": {"path": "/live", "port": "system"}, "failureThreshold": 720},
}
PORTS = [{"name": "system", "containerPort": 9090}, {"name": "nixl", "containerPort": 19090}]


def _pod(command: list[str], args: list[str]) -> dict[str, Any]:
    main = {"name": "main", "image": "sglang", "command": command, "args": args, "ports": copy.deepcopy(PORTS),
            "resources": {"limits": {"nvidia.com/gpu": "2"}}, **copy.deepcopy(PROBES)}  # fmt: skip
    return {"containers": [main], "volumes": [{"name": "shared-memory", "emptyDir": {"medium": "Memory"}}]}


def _role(role: str, pathway: str = "grove", nodes: int = 3, key: str = "worker") -> MultinodeRole:
    return MultinodeRole(pathway=pathway, role=role, node_count=nodes, component_key=key, graph_name="g",
                         namespace="ns")  # fmt: skip


def _apply(pod: dict[str, Any], role: MultinodeRole) -> dict[str, Any]:
    apply_multinode("sglang", role, pod, vllm_executor="mp", ssh_secret_name="mpi-run-ssh-secret")
    return pod["containers"][0]


CASE2 = ["/bin/sh", "-c"], ["python3 -m dynamo.sglang --custom-flag custom-value"]


def test_case2_leader_shell_arg() -> None:
    pod = _pod(*copy.deepcopy(CASE2))
    main = _apply(pod, _role("leader"))
    assert main["command"] == ["/bin/sh", "-c"]
    assert main["args"] == [
        "python3 -m dynamo.sglang --dist-init-addr "
        "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-worker-ldr-0.$(GROVE_HEADLESS_SERVICE):29500 --nnodes 3 "
        "--node-rank 0 --custom-flag custom-value"
    ]
    for probe, value in PROBES.items():
        assert main[probe] == value
    assert main["ports"] == PORTS
    assert pod["volumes"] == [{"name": "shared-memory", "emptyDir": {"medium": "Memory"}}]
    assert "env" not in main
    assert "initContainers" not in pod


def test_case2_worker_rank_and_no_probes() -> None:
    pod = _pod(*copy.deepcopy(CASE2))
    main = _apply(pod, _role("worker"))
    assert main["command"] == ["/bin/sh", "-c"]
    assert main["args"] == [
        f"python3 -m dynamo.sglang --dist-init-addr {GROVE_WORKER_LEADER}:29500 --nnodes 3 "
        "--node-rank $((GROVE_PCLQ_POD_INDEX + 1)) --custom-flag custom-value"
    ]
    for probe in PROBES:
        assert probe not in main
    assert main["ports"] == PORTS


@pytest.mark.parametrize(
    ("pathway", "role", "command", "args", "expected_command", "expected_args"),
    [
        pytest.param(
            "lws", "worker", ["python3"], ["-m", "dynamo.sglang", "--model", "llama"], ["python3"],
            ["-m", "dynamo.sglang", "--model", "llama", "--dist-init-addr", "$(LWS_LEADER_ADDRESS):29500",
             "--nnodes", "2", "--node-rank", "$(LWS_WORKER_INDEX)"],
            id="lws-worker-direct-append",
        ),
        pytest.param(
            "lws", "leader", ["python3"], ["-m", "dynamo.sglang"], ["python3"],
            ["-m", "dynamo.sglang", "--dist-init-addr", "$(LWS_LEADER_ADDRESS):29500", "--nnodes", "2",
             "--node-rank", "0"],
            id="lws-leader-direct-append",
        ),
        pytest.param(
            "grove", "leader", ["python"], ["-m", "dynamo.sglang"], ["python"],
            ["-m", "dynamo.sglang", "--dist-init-addr", f"{GROVE_WORKER_LEADER}:29500", "--nnodes", "2",
             "--node-rank", "0"],
            id="grove-leader-never-wraps",
        ),
        pytest.param(
            "grove", "worker", ["python3", "-m", "dynamo.sglang"], ["--model-path", "Qwen/Qwen3-0.6B"], ["sh", "-c"],
            [f"exec python3 -m dynamo.sglang --model-path Qwen/Qwen3-0.6B --dist-init-addr {GROVE_WORKER_LEADER}:29500 "
             "--nnodes 2 --node-rank $((GROVE_PCLQ_POD_INDEX + 1))"],
            id="grove-worker-python-wrapped-in-sh",
        ),
        pytest.param(
            "lws", "leader", ["sh", "-c"], ["python -m dynamo.sglang | tee /tmp/log"], ["sh", "-c"],
            ["python -m dynamo.sglang --dist-init-addr $(LWS_LEADER_ADDRESS):29500 --nnodes 2 --node-rank 0 "
             "| tee /tmp/log"],
            id="lws-shell-pipe",
        ),
        pytest.param(
            "grove", "leader", ["sh", "-c"], ["echo hello", "python -m some.other.module"], ["sh", "-c"],
            ["echo hello", "python -m some.other.module"],
            id="no-sglang-module-untouched",
        ),
    ],
)  # fmt: skip
def test_sglang_flags(
    pathway: str,
    role: str,
    command: list[str],
    args: list[str],
    expected_command: list[str],
    expected_args: list[str],
) -> None:
    main = _apply(_pod(command, args), _role(role, pathway, nodes=2))
    assert main["command"] == expected_command
    assert main["args"] == expected_args


def test_single_node_untouched() -> None:
    pod = _pod(*copy.deepcopy(CASE2))
    before = copy.deepcopy(pod)
    apply_multinode("sglang", _role("worker", nodes=1), pod, vllm_executor="ray", ssh_secret_name="s")
    assert pod == before

"""vLLM multinode rewrites (docs/upstream/operator.md §2.4, §6 cases 3 and 4; upstream backend_vllm.go and
backend_vllm_test.go)."""

from __future__ import annotations

import copy
import os
import subprocess
from typing import Any

import pytest

from functions.kube.backends import MultinodeRole, apply_multinode

GROVE_LEADER = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-ldr-0.$(GROVE_HEADLESS_SERVICE)"
GROVE_RANK = "$((GROVE_PCLQ_POD_INDEX + 1))"
PROBES = {
    "livenessProbe": {"httpGet": {"path": "/live", "port": "system"}},
    "readinessProbe": {"httpGet": {"path": "/health", "port": "system"}},
    "startupProbe": {"httpGet": {"path": "/live", "port": "system"}},
}
NIXL_ENV = {"name": "VLLM_NIXL_SIDE_CHANNEL_HOST", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}


def _pod(command: list[str], args: list[str], gpus: int | None, env: list[dict] | None = None) -> dict[str, Any]:
    main: dict[str, Any] = {"name": "main", "image": "vllm:latest", "command": command, "args": args, **PROBES}
    if gpus is not None:
        main["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"cpu": "1"}}
    main["env"] = env or [{"name": "DYN_SYSTEM_PORT", "value": "9090"}]
    return {"containers": [{"name": "sidecar", "image": "other"}, main]}


def _role(role: str, pathway: str = "grove", nodes: int = 2, key: str = "test-service") -> MultinodeRole:
    return MultinodeRole(pathway=pathway, role=role, node_count=nodes, component_key=key, graph_name="test-dgd",
                         namespace="ns")  # fmt: skip


def _apply(pod: dict[str, Any], role: MultinodeRole, executor: str = "ray") -> dict[str, Any]:
    apply_multinode("vllm", role, pod, vllm_executor=executor, ssh_secret_name="mpi-run-ssh-secret")
    return pod["containers"][1]


# --- docs/upstream/operator.md §6 case 3: ray, no origin annotation ---------------------------------------------------

CASE3_ARGS = ["--custom-flag", "custom-value", "--tensor-parallel-size", "4", "--pipeline-parallel-size", "1"]


def test_case3_ray_leader_command() -> None:
    pod = _pod(["python3", "-m", "dynamo.vllm"], list(CASE3_ARGS), gpus=2)
    main = _apply(pod, _role("leader", key="worker"))
    assert main["command"] == ["/bin/sh", "-c"]
    assert main["args"] == [
        "ray start --head --port=6379 && python3 -m dynamo.vllm --custom-flag custom-value --tensor-parallel-size 4 "
        "--pipeline-parallel-size 1 --distributed-executor-backend ray"
    ]
    for probe, value in PROBES.items():  # leader probes untouched
        assert main[probe] == value
    assert main["env"] == [{"name": "DYN_SYSTEM_PORT", "value": "9090"}]  # no side-channel env with ray
    assert "initContainers" not in pod
    assert "volumes" not in pod


def test_case3_ray_worker_command() -> None:
    pod = _pod(["python3", "-m", "dynamo.vllm"], list(CASE3_ARGS), gpus=2)
    main = _apply(pod, _role("worker", key="worker"))
    assert main["command"] == ["/bin/sh", "-c"]
    assert main["args"] == [
        "ray start --address=$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-worker-ldr-0.$(GROVE_HEADLESS_SERVICE):6379 --block"
    ]
    for probe in PROBES:
        assert probe not in main
    assert "initContainers" not in pod


def test_ray_leader_quotes_json_args() -> None:
    # upstream: "multinode leader uses ray with JSON args"
    args = ["--model", "test", "--tensor-parallel-size", "8", "--kv-transfer-config",
            '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}']  # fmt: skip
    main = _apply(_pod(["python3", "-m", "dynamo.vllm"], args, gpus=4), _role("leader", nodes=3))
    assert main["args"] == [
        "ray start --head --port=6379 && python3 -m dynamo.vllm --model test --tensor-parallel-size 8 "
        '--kv-transfer-config "{\\"kv_connector\\": \\"NixlConnector\\", \\"kv_role\\": \\"kv_both\\"}" '
        "--distributed-executor-backend ray"
    ]


def test_ray_lws_worker() -> None:
    main = _apply(_pod([], ["python3", "-m", "dynamo.vllm", "--tensor-parallel-size", "8"], 4), _role("worker", "lws"))
    assert main["command"] == ["/bin/sh", "-c"]
    assert main["args"] == ["ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"]


# --- docs/upstream/operator.md §6 case 4: mp (origin version >= 1.0.0), TP16 on 8 GPUs, 2 nodes -----------------------

TP16 = ["-m", "dynamo.vllm", "--tensor-parallel-size", "16"]


@pytest.mark.parametrize(
    ("pathway", "role", "expected_command", "expected_args"),
    [
        pytest.param(
            "grove", "leader", ["python3"],
            [*TP16, "--distributed-executor-backend", "mp", "--nnodes", "2", "--master-addr", GROVE_LEADER,
             "--master-port", "29500", "--node-rank", "0"],
            id="grove-leader",
        ),
        pytest.param(
            "grove", "worker", ["sh", "-c"],
            [f"exec python3 -m dynamo.vllm --tensor-parallel-size 16 --distributed-executor-backend mp --nnodes 2 "
             f"--master-addr {GROVE_LEADER} --master-port 29500 --node-rank {GROVE_RANK} --headless"],
            id="grove-worker-needs-shell",
        ),
        pytest.param(
            "lws", "leader", ["python3"],
            [*TP16, "--distributed-executor-backend", "mp", "--nnodes", "2", "--master-addr", "$(LWS_LEADER_ADDRESS)",
             "--master-port", "29500", "--node-rank", "0"],
            id="lws-leader",
        ),
        pytest.param(
            "lws", "worker", ["python3"],
            [*TP16, "--distributed-executor-backend", "mp", "--nnodes", "2", "--master-addr", "$(LWS_LEADER_ADDRESS)",
             "--master-port", "29500", "--node-rank", "$(LWS_WORKER_INDEX)", "--headless"],
            id="lws-worker-kubelet-expanded",
        ),
    ],
)  # fmt: skip
def test_case4_mp_flags(pathway: str, role: str, expected_command: list[str], expected_args: list[str]) -> None:
    main = _apply(_pod(["python3"], list(TP16), gpus=8), _role(role, pathway), executor="mp")
    assert main["command"] == expected_command
    assert main["args"] == expected_args
    assert main["env"] == [{"name": "DYN_SYSTEM_PORT", "value": "9090"}, NIXL_ENV]
    for probe, value in PROBES.items():
        assert main.get(probe) == (value if role == "leader" else None)


def test_mp_shell_command_flags_follow_the_module() -> None:
    pod = _pod(["/bin/sh", "-c"], ["python3 -m dynamo.vllm --tensor-parallel-size 16 && echo done"], gpus=8)
    main = _apply(pod, _role("worker"), executor="mp")
    assert main["command"] == ["/bin/sh", "-c"]
    assert main["args"] == [
        f"python3 -m dynamo.vllm --distributed-executor-backend mp --nnodes 2 --master-addr {GROVE_LEADER} "
        f"--master-port 29500 --node-rank {GROVE_RANK} --headless --tensor-parallel-size 16 && echo done"
    ]


@pytest.mark.parametrize(
    ("pathway", "host"),
    [
        ("grove", "${GROVE_PCSG_NAME}-${GROVE_PCSG_INDEX}-test-service-ldr-0.${GROVE_HEADLESS_SERVICE}"),
        ("lws", "${LWS_LEADER_ADDRESS}"),
    ],
)
def test_mp_worker_wait_for_leader_init_container(pathway: str, host: str) -> None:
    pod = _pod(["python3"], list(TP16), gpus=8)
    pod["initContainers"] = [{"name": "existing-init", "image": "busybox"}]
    pod["volumes"] = [{"name": "shared-memory", "emptyDir": {"medium": "Memory"}}]
    _apply(pod, _role("worker", pathway), executor="mp")
    assert [c["name"] for c in pod["initContainers"]] == ["existing-init", "wait-for-leader-mp"]
    init = pod["initContainers"][1]
    assert init["image"] == "vllm:latest"  # the main container's image, not the first container's
    assert init["command"][:2] == ["sh", "-c"]
    assert init["command"][2] == (
        f'export LEADER_HOST="{host}" LEADER_PORT="29500" && exec python3 /scripts/wait-for-leader.py'
    )
    assert "env" not in init
    assert init["volumeMounts"] == [{"name": "wait-leader-script", "mountPath": "/scripts", "readOnly": True}]
    assert pod["volumes"] == [
        {"name": "shared-memory", "emptyDir": {"medium": "Memory"}},
        {"name": "wait-leader-script", "configMap": {"name": "test-dgd-wait-leader-script"}},
    ]


def test_wait_for_leader_script_runs_leader_host_through_the_shell() -> None:
    pod = _pod(["python3"], list(TP16), gpus=8)
    _apply(pod, _role("worker"), executor="mp")
    command = pod["initContainers"][0]["command"]
    probe = command[2].replace("exec python3 /scripts/wait-for-leader.py", 'echo "$LEADER_HOST:$LEADER_PORT"')
    env = {**os.environ, "GROVE_PCSG_NAME": "pcs-0-vllm", "GROVE_PCSG_INDEX": "1", "GROVE_HEADLESS_SERVICE": "hs"}
    out = subprocess.run([command[0], command[1], probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "pcs-0-vllm-1-test-service-ldr-0.hs:29500"


@pytest.mark.parametrize(
    ("role", "executor", "graph_name"),
    [("leader", "mp", "test-dgd"), ("worker", "ray", "test-dgd"), ("worker", "mp", "")],
    ids=["mp-leader", "ray-worker", "no-graph-name"],
)
def test_no_wait_for_leader_init_container(role: str, executor: str, graph_name: str) -> None:
    pod = _pod(["python3"], list(TP16), gpus=8)
    target = MultinodeRole("grove", role, 2, "test-service", graph_name, "ns")  # type: ignore[arg-type]
    apply_multinode("vllm", target, pod, vllm_executor=executor, ssh_secret_name="s")
    assert "initContainers" not in pod
    assert "volumes" not in pod


def test_mp_data_parallel_worker_gets_the_side_channel_but_no_init_container() -> None:
    # HEAD gates the env var on the executor choice, the init container on the mp flag in the command line
    main_pod = _pod(["python3"], ["-m", "dynamo.vllm", "--data-parallel-size", "16"], gpus=8)
    main = _apply(main_pod, _role("worker"), executor="mp")
    assert NIXL_ENV in main["env"]
    assert "initContainers" not in main_pod
    assert "--data-parallel-hybrid-lb" in main["args"][0]


@pytest.mark.parametrize(
    "args",
    [
        ["--distributed-executor-backend", "mp"],
        ["--distributed-executor-backend=mp"],
        ["-m dynamo.vllm --distributed-executor-backend mp"],
    ],
    ids=["adjacent", "equals", "one-shell-string"],
)
def test_a_users_own_mp_flag_brings_the_init_container(args: list[str]) -> None:
    pod = _pod(["python3"], args, gpus=8)  # no TP launch to rewrite: the flag is the user's
    _apply(pod, _role("worker"), executor="ray")
    assert [c["name"] for c in pod["initContainers"]] == ["wait-for-leader-mp"]
    assert NIXL_ENV not in pod["containers"][1]["env"]


def test_no_mp_flag_no_init_container() -> None:
    pod = _pod(["python3"], ["--distributed-executor-backend", "ray", "--mp"], gpus=8)
    _apply(pod, _role("worker"), executor="mp")
    assert "initContainers" not in pod


def test_side_channel_env_goes_before_compilation_cache_env() -> None:
    env = [{"name": "A", "value": "1"}, {"name": "VLLM_CACHE_ROOT", "value": "/cache"}]
    main = _apply(_pod(["python3"], list(TP16), gpus=8, env=copy.deepcopy(env)), _role("leader"), executor="mp")
    assert main["env"] == [env[0], NIXL_ENV, env[1]]


# --- data parallel (TP*PP fits, TP*PP*DP does not) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pathway", "role", "args", "expected_command", "expected_args"),
    [
        pytest.param(
            "grove", "leader", ["-m", "dynamo.vllm", "--data-parallel-size", "16"], ["python3"],
            ["-m", "dynamo.vllm", "--data-parallel-size", "16", "--data-parallel-hybrid-lb",
             "--data-parallel-size-local", "8", "--data-parallel-start-rank", "0", "--data-parallel-address",
             GROVE_LEADER, "--data-parallel-rpc-port", "13445"],
            id="case4-dp-grove-leader",
        ),
        pytest.param(
            "lws", "leader", ["-m", "dynamo.vllm", "--data-parallel-size", "16"], ["python3"],
            ["-m", "dynamo.vllm", "--data-parallel-size", "16", "--data-parallel-hybrid-lb",
             "--data-parallel-size-local", "8", "--data-parallel-start-rank", "0", "--data-parallel-address",
             "$(LWS_LEADER_ADDRESS)", "--data-parallel-rpc-port", "13445"],
            id="dp-lws-leader",
        ),
        pytest.param(
            "grove", "worker", ["-m", "dynamo.vllm", "--data-parallel-size", "16"], ["sh", "-c"],
            [f"exec python3 -m dynamo.vllm --data-parallel-size 16 --data-parallel-hybrid-lb "
             f"--data-parallel-size-local 8 --data-parallel-start-rank $(( 8 * {GROVE_RANK} )) "
             f"--data-parallel-address {GROVE_LEADER} --data-parallel-rpc-port 13445"],
            id="dp-grove-worker",
        ),
        pytest.param(
            "grove", "worker", ["-m", "dynamo.vllm", "--data-parallel-size", "8", "--tensor-parallel-size", "2"],
            ["sh", "-c"],
            [f"exec python3 -m dynamo.vllm --data-parallel-size 8 --tensor-parallel-size 2 --data-parallel-hybrid-lb "
             f"--data-parallel-size-local 4 --data-parallel-start-rank $(( 4 * {GROVE_RANK} )) "
             f"--data-parallel-address {GROVE_LEADER} --data-parallel-rpc-port 13445"],
            id="dp-grove-worker-tp2",
        ),
        pytest.param(
            "lws", "worker", ["-m", "dynamo.vllm", "--data-parallel-size", "16"], ["sh", "-c"],
            ["exec python3 -m dynamo.vllm --data-parallel-size 16 --data-parallel-hybrid-lb "
             "--data-parallel-size-local 8 --data-parallel-start-rank $(( 8 * $(LWS_WORKER_INDEX) )) "
             "--data-parallel-address $(LWS_LEADER_ADDRESS) --data-parallel-rpc-port 13445"],
            id="dp-lws-worker-arithmetic-needs-shell",
        ),
    ],
)  # fmt: skip
def test_data_parallel_flags(
    pathway: str, role: str, args: list[str], expected_command: list[str], expected_args: list[str]
) -> None:
    main = _apply(_pod(["python3"], args, gpus=8), _role(role, pathway))
    assert main["command"] == expected_command
    assert main["args"] == expected_args


@pytest.mark.parametrize(
    ("pathway", "text", "expected"),
    [
        (
            "grove",
            "python3 -m dynamo.vllm --data-parallel-size 8",
            "python3 -m dynamo.vllm --data-parallel-hybrid-lb --data-parallel-size-local 4 "
            f"--data-parallel-start-rank 0 --data-parallel-address {GROVE_LEADER} --data-parallel-rpc-port 13445 "
            "--data-parallel-size 8",
        ),
        (
            "grove",
            "echo blah | wc -l && python3 -m dynamo.vllm --data-parallel-size 8 && ls -al",
            "echo blah | wc -l && python3 -m dynamo.vllm --data-parallel-hybrid-lb --data-parallel-size-local 4 "
            f"--data-parallel-start-rank 0 --data-parallel-address {GROVE_LEADER} --data-parallel-rpc-port 13445 "
            "--data-parallel-size 8 && ls -al",
        ),
        (
            "lws",
            "python3 -m dynamo.vllm --data-parallel-size 8 | tee /tmp/log",
            "python3 -m dynamo.vllm --data-parallel-hybrid-lb --data-parallel-size-local 4 "
            "--data-parallel-start-rank 0 --data-parallel-address $(LWS_LEADER_ADDRESS) --data-parallel-rpc-port 13445 "
            "--data-parallel-size 8 | tee /tmp/log",
        ),
    ],
)
def test_data_parallel_shell_command_leader(pathway: str, text: str, expected: str) -> None:
    main = _apply(_pod(["sh", "-c"], [text], gpus=4), _role("leader", pathway))
    assert main["command"] == ["sh", "-c"]
    assert main["args"] == [expected]


# --- nothing to rewrite ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "args", "gpus"),
    [
        pytest.param(["python3"], list(TP16), None, id="no-gpu-limit"),
        pytest.param(["python3"], ["-m", "dynamo.vllm", "--tensor-parallel-size", "4"], 8, id="fits-on-one-node"),
        pytest.param(["python3", "-m", "dynamo.vllm", "--tensor-parallel-size", "16"], [], 8, id="tp-in-command-only"),
        pytest.param(["python3"], ["-m", "dynamo.vllm", "--tensor-parallel-size", "many"], 8, id="tp-not-a-number"),
    ],
)
def test_no_launch_rewrite_but_worker_probes_removed(command: list[str], args: list[str], gpus: int | None) -> None:
    pod = _pod(list(command), list(args), gpus)
    main = _apply(pod, _role("worker"))
    assert main["command"] == command
    assert main["args"] == args
    for probe in PROBES:
        assert probe not in main


def test_single_node_and_noop_untouched() -> None:
    pod = _pod(["python3"], list(TP16), gpus=8)
    before = copy.deepcopy(pod)
    apply_multinode("vllm", _role("worker", nodes=1), pod, vllm_executor="mp", ssh_secret_name="s")
    assert pod == before
    apply_multinode("noop", _role("worker"), pod, vllm_executor="mp", ssh_secret_name="s")
    assert pod == before


def test_gpu_resource_override() -> None:
    pod = _pod(["python3"], list(TP16), gpus=None)
    pod["containers"][1]["resources"] = {"limits": {"nvidia.com/mig-3g.40gb": 8}}
    role = _role("leader")
    apply_multinode("vllm", role, pod, vllm_executor="mp", ssh_secret_name="s", gpu_resource="nvidia.com/mig-3g.40gb")
    assert pod["containers"][1]["args"][-2:] == ["--node-rank", "0"]


@pytest.mark.parametrize("role", ["leader", "worker"])
def test_a_shell_script_running_vllm_serve_gets_no_mp_flags_and_no_wait_for_leader(role: str) -> None:
    """Upstream HEAD injects the mp flags only after a ``python… vllm`` command (injectFlagsIntoPythonCommand); a
    shell script running the ``vllm`` executable keeps its command line, so a worker has no mp flag to wait for."""
    script = "cd /work && vllm serve Qwen/Qwen3-0.6B --tensor-parallel-size 16"
    pod = _pod(["bash", "-lc"], [script], gpus=8)
    main = _apply(pod, _role(role), executor="mp")
    assert (main["command"], main["args"]) == (["bash", "-lc"], [script])
    assert "initContainers" not in pod
    assert NIXL_ENV in main["env"]  # the mp side channel does not depend on the launch line

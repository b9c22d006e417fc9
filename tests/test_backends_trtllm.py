"""TensorRT-LLM multinode over MPI/SSH (docs/upstream/operator.md §2.4; upstream backend_trtllm.go and
backend_trtllm_test.go)."""

from __future__ import annotations

import copy
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from functions.kube.backends import BackendError, MultinodeRole, apply_multinode

SECRET = "mpi-run-ssh-secret"
GROVE = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-{}.$(GROVE_HEADLESS_SERVICE)"
PROBES = {
    "livenessProbe": {"httpGet": {"path": "/live", "port": "system"}},
    "readinessProbe": {"httpGet": {"path": "/health", "port": "system"}},
    "startupProbe": {"httpGet": {"path": "/live", "port": "system"}},
}
# docs/upstream/operator.md §2.4: the fixed list (with upstream #11999's CPATH and TRITON_PTXAS_PATH), sorted
# together with the container's env names (incl. the OMPI variable)
FORWARDED = (
    "-x CPATH -x CUDA_VISIBLE_DEVICES -x DYN_SYSTEM_PORT -x HF_DATASETS_CACHE -x HF_ENDPOINT -x HF_HOME -x HF_TOKEN "
    "-x HOME -x HUGGING_FACE_HUB_TOKEN -x LD_LIBRARY_PATH -x MODEL_PATH -x NCCL_DEBUG -x NCCL_IB_DISABLE "
    "-x NCCL_P2P_DISABLE -x OMPI_MCA_orte_keep_fqdn_hostnames -x PATH -x PYTHONPATH -x TENSORRT_LLM_CACHE_DIR "
    "-x TOKENIZERS_PARALLELISM -x TRANSFORMERS_CACHE -x TRITON_PTXAS_PATH -x TRTLLM_USE_UCX_KVCACHE -x USER"
)
SSH_FLAGS = '--mca pml ob1 --mca plm_rsh_args "-p 2222 -o StrictHostKeyChecking=no -i $HOME/.ssh/id_rsa"'


def _pod(resources: dict[str, Any], command: list[str] | None = None, args: list[str] | None = None) -> dict:
    main = {
        "name": "main",
        "image": "trtllm",
        "command": command if command is not None else ["python3", "-m", "dynamo.trtllm"],
        "args": args if args is not None else ["--model", "test"],
        "env": [{"name": "DYN_SYSTEM_PORT", "value": "9090"}],
        "resources": resources,
        "volumeMounts": [
            {"name": "model-pvc", "mountPath": "/models"},
            {"name": "shared-memory", "mountPath": "/dev/shm"},
        ],
        **copy.deepcopy(PROBES),
    }
    return {"containers": [main], "volumes": [{"name": "shared-memory", "emptyDir": {"medium": "Memory"}}]}


def _role(role: str, pathway: str = "grove", nodes: int = 3) -> MultinodeRole:
    return MultinodeRole(pathway=pathway, role=role, node_count=nodes, component_key="test-service", graph_name="g",
                         namespace="ns")  # fmt: skip


def _apply(pod: dict[str, Any], role: MultinodeRole) -> dict[str, Any]:
    apply_multinode("trtllm", role, pod, vllm_executor="ray", ssh_secret_name=SECRET)
    return pod["containers"][0]


def _mpirun(script: str) -> str:
    return script[script.index("mpirun ") :]


def test_leader_grove_mpirun() -> None:
    pod = _pod({"requests": {"nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "4"}})
    main = _apply(pod, _role("leader"))
    assert main["command"] == ["/bin/sh", "-c"]
    assert len(main["args"]) == 1
    hosts = ",".join(GROVE.format(s) for s in ("ldr-0", "wkr-0", "wkr-1"))
    assert _mpirun(main["args"][0]) == (
        'mpirun $(if [ "$(id -u)" = "0" ]; then echo --allow-run-as-root; fi) --oversubscribe -n 6 '
        f"-H {hosts} {SSH_FLAGS} {FORWARDED} bash -c 'trtllm-llmapi-launch python3 -m dynamo.trtllm --model test'"
    )
    assert "getent hosts" not in main["args"][0]  # Grove: no DNS wait
    for probe, value in PROBES.items():  # leader probes untouched
        assert main[probe] == value


def test_leader_lws_waits_for_worker_dns_then_uses_limit_gpus() -> None:
    pod = _pod({"limits": {"nvidia.com/gpu": "1"}})
    main = _apply(pod, _role("leader", "lws", nodes=2))
    script = main["args"][0]
    worker = "${LWS_LEADER_ADDRESS%%.*}-1.${LWS_LEADER_ADDRESS#*.}"
    assert _mpirun(script).startswith(
        'mpirun $(if [ "$(id -u)" = "0" ]; then echo --allow-run-as-root; fi) --oversubscribe -n 2 '
        f"-H $(LWS_LEADER_ADDRESS),{worker} {SSH_FLAGS} {FORWARDED} bash -c "
    )
    dns_wait = script[script.index("{ dns_deadline") : script.index(" && mpirun")]
    assert "+ 300 ))" in dns_wait
    assert f"for peer in {worker}; do" in dns_wait
    assert 'getent hosts "$peer"' in dns_wait


def test_leader_quotes_json_args_for_bash_c() -> None:
    pod = _pod({"requests": {"nvidia.com/gpu": "4"}}, args=["--override-engine-args", '{"load_format": "DUMMY"}'])
    main = _apply(pod, _role("leader", nodes=2))
    assert main["args"][0].endswith(
        "bash -c 'trtllm-llmapi-launch python3 -m dynamo.trtllm --override-engine-args "
        '"{\\"load_format\\": \\"DUMMY\\"}"\''
    )


def test_leader_shell_command_keeps_the_arg_string() -> None:
    pod = _pod({"requests": {"nvidia.com/gpu": "8"}}, ["/bin/sh", "-c"], ["python3 -m dynamo.trtllm --x 1"])
    main = _apply(pod, _role("leader", nodes=2))
    hosts = GROVE.format("ldr-0") + "," + GROVE.format("wkr-0")
    assert main["args"][0].endswith(
        f"-n 16 -H {hosts} {SSH_FLAGS} {FORWARDED} bash -c 'trtllm-llmapi-launch python3 -m dynamo.trtllm --x 1'"
    )


@pytest.mark.parametrize("role", ["leader", "worker"])
def test_common_ssh_volume_mount_and_env(role: str) -> None:
    pod = _pod({"requests": {"nvidia.com/gpu": "2"}})
    main = _apply(pod, _role(role))
    assert main["volumeMounts"] == [
        {"name": "model-pvc", "mountPath": "/models"},
        {"name": SECRET, "mountPath": "/ssh-pk", "readOnly": True},
        {"name": "shared-memory", "mountPath": "/dev/shm"},
    ]
    assert pod["volumes"] == [
        {"name": "shared-memory", "emptyDir": {"medium": "Memory"}},
        {"name": SECRET, "secret": {"secretName": SECRET, "defaultMode": 0o644}},
    ]
    assert pod["volumes"][1]["secret"]["defaultMode"] == 420
    assert main["env"] == [
        {"name": "DYN_SYSTEM_PORT", "value": "9090"},
        {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "1"},
    ]


def test_worker_probes_and_sshd() -> None:
    pod = _pod({"requests": {"nvidia.com/gpu": "2"}})
    main = _apply(pod, _role("worker"))
    assert "livenessProbe" not in main
    assert "startupProbe" not in main
    assert main["readinessProbe"] == {
        "tcpSocket": {"port": 2222},
        "initialDelaySeconds": 20,
        "periodSeconds": 20,
        "timeoutSeconds": 5,
        "failureThreshold": 10,
    }
    assert main["command"] == ["/bin/sh", "-c"]
    script = main["args"][0]
    assert "mpirun" not in script
    assert script.endswith('exec /usr/sbin/sshd -D -f "$HOME/.ssh/sshd_config"')
    for kind in ("rsa", "ecdsa", "ed25519"):
        assert f"HostKey $HOME/.ssh/host_keys/ssh_host_{kind}_key" in script


def _run_with_stub_tools(script: str, home: Path) -> subprocess.CompletedProcess:
    """Run a generated script with /ssh-pk redirected and ssh-keygen/sshd/mpirun replaced by recording stubs."""
    bin_dir = home / "bin"
    keys = home / "pk"
    bin_dir.mkdir()
    keys.mkdir()
    (keys / "private.key").write_text("PRIVATE")
    (keys / "private.key.pub").write_text("PUBLIC")
    for tool in ("ssh-keygen", "sshd", "mpirun"):
        stub = bin_dir / tool
        stub.write_text(f'#!/bin/sh\necho "{tool} $*" >> "$HOME/calls"\n')
        stub.chmod(0o755)
    script = script.replace("/ssh-pk/", f"{keys}/").replace("/usr/sbin/sshd", "sshd")
    env = {"HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin"}
    return subprocess.run(["/bin/sh", "-c", script], env=env, capture_output=True, text=True, timeout=30)


def test_worker_script_sets_up_keys_and_sshd_config(tmp_path: Path) -> None:
    pod = _pod({"requests": {"nvidia.com/gpu": "2"}})
    script = _apply(pod, _role("worker"))["args"][0]
    result = _run_with_stub_tools(script, tmp_path)
    assert result.returncode == 0, result.stderr
    ssh = tmp_path / ".ssh"
    assert (ssh / "id_rsa").read_text() == "PRIVATE"
    assert (ssh / "id_rsa.pub").read_text() == "PUBLIC"
    assert (ssh / "authorized_keys").read_text() == "PUBLIC"
    assert (ssh / "id_rsa").stat().st_mode & 0o777 == 0o600
    assert (ssh / "authorized_keys").stat().st_mode & 0o777 == 0o600
    assert (ssh / "id_rsa.pub").stat().st_mode & 0o777 == 0o644
    assert (ssh / "config").read_text().splitlines() == [
        "Host *", f"IdentityFile {ssh}/id_rsa", "StrictHostKeyChecking no", "Port 2222",
    ]  # fmt: skip
    assert (ssh / "sshd_config").read_text().splitlines() == [
        "Port 2222",
        f"HostKey {ssh}/host_keys/ssh_host_rsa_key",
        f"HostKey {ssh}/host_keys/ssh_host_ecdsa_key",
        f"HostKey {ssh}/host_keys/ssh_host_ed25519_key",
        f"PidFile {ssh}/run/sshd.pid",
        "StrictModes no",
        "PermitRootLogin yes",
        "PasswordAuthentication no",
        "PubkeyAuthentication yes",
        f"AuthorizedKeysFile {ssh}/authorized_keys",
    ]
    assert (ssh / "run").is_dir()
    assert (tmp_path / "calls").read_text().splitlines() == [
        f"ssh-keygen -t rsa -f {ssh}/host_keys/ssh_host_rsa_key -N ",
        f"ssh-keygen -t ecdsa -f {ssh}/host_keys/ssh_host_ecdsa_key -N ",
        f"ssh-keygen -t ed25519 -f {ssh}/host_keys/ssh_host_ed25519_key -N ",
        f"sshd -D -f {ssh}/sshd_config",
    ]


def test_leader_script_runs_mpirun_with_root_flag_only_as_root(tmp_path: Path) -> None:
    pod = _pod({"requests": {"nvidia.com/gpu": "1"}})
    script = _apply(pod, _role("leader", nodes=2))["args"][0]
    # Grove host names are kubelet $(VAR) references; stand in plain names for a local run
    script = script.replace(GROVE.format("ldr-0"), "ldr").replace(GROVE.format("wkr-0"), "wkr")
    result = _run_with_stub_tools(script, tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / ".ssh" / "config").read_text().splitlines()[-1] == "Port 2222"
    (call,) = (tmp_path / "calls").read_text().splitlines()
    root_flag = "--allow-run-as-root " if os.getuid() == 0 else ""
    assert call.startswith(f"mpirun {root_flag}--oversubscribe -n 2 -H ldr,wkr --mca pml ob1 --mca plm_rsh_args ")
    assert f"-p 2222 -o StrictHostKeyChecking=no -i {tmp_path}/.ssh/id_rsa -x CPATH -x CUDA_VISIBLE_DEVICES" in call
    assert call.endswith("bash -c trtllm-llmapi-launch python3 -m dynamo.trtllm --model test")


def test_lws_leader_script_is_valid_shell() -> None:
    script = _apply(_pod({"requests": {"nvidia.com/gpu": "1"}}), _role("leader", "lws"))["args"][0]
    result = subprocess.run(["sh", "-n", "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_single_node_untouched_and_unknown_backend_rejected() -> None:
    pod = _pod({"requests": {"nvidia.com/gpu": "2"}})
    before = copy.deepcopy(pod)
    apply_multinode("trtllm", _role("leader", nodes=1), pod, vllm_executor="ray", ssh_secret_name=SECRET)
    assert pod == before
    with pytest.raises(BackendError, match="unsupported backend framework 'tgi'"):
        apply_multinode("tgi", _role("leader"), pod, vllm_executor="ray", ssh_secret_name=SECRET)
    with pytest.raises(BackendError, match="no container named 'main'"):
        apply_multinode("trtllm", _role("leader"), {"containers": [{"name": "x"}]}, vllm_executor="ray",
                        ssh_secret_name=SECRET)  # fmt: skip

"""TensorRT-LLM multinode over MPI/SSH (docs/upstream/operator.md §2.4; upstream ``backend_trtllm.go``).

Upstream facts beyond docs/upstream/operator.md:

* the SSH secret holds ``private.key`` and ``private.key.pub``; both roles install them as ``$HOME/.ssh/id_rsa``,
  ``id_rsa.pub`` and ``authorized_keys`` (modes 600/644/600) and write a client config for port 2222 (``$HOME`` rather
  than ``~`` because images may set HOME to a non-root home while running as root);
* workers generate rsa/ecdsa/ed25519 host keys under ``$HOME/.ssh/host_keys``, write ``$HOME/.ssh/sshd_config``
  (port 2222, those host keys, pid file ``$HOME/.ssh/run/sshd.pid``, ``StrictModes no``, ``PermitRootLogin yes``,
  password auth off, pubkey auth on, ``AuthorizedKeysFile`` under ``$HOME``) and run ``/usr/sbin/sshd -D -f`` on it;
* the leader's original command is the quoted command+args for a python command, else the args joined by blanks,
  else the command joined; the ``-x`` list includes the container's env names as they are when the backend runs,
  i.e. including ``OMPI_MCA_orte_keep_fqdn_hostnames``;
* the SSH volume mount is added to the main container and the secret volume to the pod, for both roles.
"""

from __future__ import annotations

from typing import Any

from functions.kube.backends.podparts import (
    GPU_RESOURCE,
    add_volume,
    add_volume_mount,
    append_env,
    drop_probes,
    gpu_request_or_limit,
)
from functions.kube.backends.shell import is_python_command, quoted_line
from functions.kube.backends.topology import MultinodeRole, host_names, needs_dns_wait

SSH_PORT = 2222
SSH_MOUNT_PATH = "/ssh-pk"
SSH_SECRET_MODE = 0o644
DNS_WAIT_SECONDS = 300
KEEP_FQDN_ENV = {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "1"}
FORWARDED_ENV = (
    "CUDA_VISIBLE_DEVICES", "MODEL_PATH", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_ENDPOINT",
    "TOKENIZERS_PARALLELISM", "NCCL_DEBUG", "NCCL_IB_DISABLE", "NCCL_P2P_DISABLE", "TENSORRT_LLM_CACHE_DIR",
    "HF_HOME", "TRANSFORMERS_CACHE", "HF_DATASETS_CACHE", "PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "HOME", "USER",
    "TRTLLM_USE_UCX_KVCACHE", "CPATH", "TRITON_PTXAS_PATH",
)  # fmt: skip  # the last two from upstream #11999: Triton's JIT on the remote ranks finds CUDA headers and ptxas

WORKER_READINESS: dict[str, Any] = {
    "tcpSocket": {"port": SSH_PORT},
    "initialDelaySeconds": 20,
    "periodSeconds": 20,
    "timeoutSeconds": 5,
    "failureThreshold": 10,
}

_HOST_KEY_TYPES = ("rsa", "ecdsa", "ed25519")


def _install_keys(*extra_dirs: str) -> list[str]:
    """Shell steps shared by leader and workers: key pair, authorized key and client config in $HOME/.ssh."""
    dirs = " ".join(f'"$HOME/.ssh{d}"' for d in ("", *extra_dirs))
    client_config = " ".join(
        ["'Host *'", '"IdentityFile $HOME/.ssh/id_rsa"', "'StrictHostKeyChecking no'", f"'Port {SSH_PORT}'"]
    )
    return [
        f"mkdir -p {dirs}",
        f'cp {SSH_MOUNT_PATH}/private.key "$HOME/.ssh/id_rsa"',
        f'cp {SSH_MOUNT_PATH}/private.key.pub "$HOME/.ssh/id_rsa.pub"',
        f'cp {SSH_MOUNT_PATH}/private.key.pub "$HOME/.ssh/authorized_keys"',
        'chmod 600 "$HOME/.ssh/id_rsa" "$HOME/.ssh/authorized_keys"',
        'chmod 644 "$HOME/.ssh/id_rsa.pub"',
        f"printf '%s\\n' {client_config} > \"$HOME/.ssh/config\"",
    ]


def worker_script() -> str:
    """sshd on port 2222 with host keys and config under $HOME/.ssh, in the foreground."""
    keys = "$HOME/.ssh/host_keys"
    sshd_lines = [
        f"'Port {SSH_PORT}'",
        *(f'"HostKey {keys}/ssh_host_{kind}_key"' for kind in _HOST_KEY_TYPES),
        '"PidFile $HOME/.ssh/run/sshd.pid"',
        "'StrictModes no'",
        "'PermitRootLogin yes'",
        "'PasswordAuthentication no'",
        "'PubkeyAuthentication yes'",
        '"AuthorizedKeysFile $HOME/.ssh/authorized_keys"',
    ]
    steps = [
        *_install_keys("/host_keys", "/run"),
        f"for kind in {' '.join(_HOST_KEY_TYPES)}; do "
        f'ssh-keygen -t "$kind" -f "{keys}/ssh_host_${{kind}}_key" -N \'\' || exit 1; done',
        f"printf '%s\\n' {' '.join(sshd_lines)} > \"$HOME/.ssh/sshd_config\"",
        'exec /usr/sbin/sshd -D -f "$HOME/.ssh/sshd_config"',
    ]
    return " && ".join(steps)


def _dns_wait(hosts: list[str]) -> str:
    """Wait (at most DNS_WAIT_SECONDS overall) until every host resolves."""
    return (
        f"{{ dns_deadline=$(( $(date +%s) + {DNS_WAIT_SECONDS} )); for peer in {' '.join(hosts)}; do "
        'until getent hosts "$peer" >/dev/null 2>&1; do '
        'if [ "$(date +%s)" -ge "$dns_deadline" ]; then echo "gave up waiting for DNS of $peer" >&2; exit 1; fi; '
        'echo "waiting for DNS of $peer"; sleep 2; done; echo "resolved $peer"; done; }'
    )


def _original_command(main: dict[str, Any]) -> str:
    command = list(main.get("command") or [])
    args = list(main.get("args") or [])
    if command and is_python_command(command[0]):
        return quoted_line(command + args)
    if args:
        return " ".join(args)
    return " ".join(command)


def mpirun_line(role: MultinodeRole, main: dict[str, Any], hosts: list[str], gpu_resource: str = GPU_RESOURCE) -> str:
    gpus_per_node = gpu_request_or_limit(main, gpu_resource)
    names = sorted(set(FORWARDED_ENV) | {e["name"] for e in main.get("env") or [] if e.get("name")})
    forwarded = " ".join(f"-x {name}" for name in names)
    root_only = '$(if [ "$(id -u)" = "0" ]; then echo --allow-run-as-root; fi)'
    rsh_args = f'"-p {SSH_PORT} -o StrictHostKeyChecking=no -i $HOME/.ssh/id_rsa"'
    return (
        f"mpirun {root_only} --oversubscribe -n {role.node_count * gpus_per_node} -H {','.join(hosts)} "
        f"--mca pml ob1 --mca plm_rsh_args {rsh_args} {forwarded} "
        f"bash -c 'trtllm-llmapi-launch {_original_command(main)}'"
    )


def leader_script(role: MultinodeRole, main: dict[str, Any], gpu_resource: str = GPU_RESOURCE) -> str:
    hosts = host_names(role)
    steps = _install_keys()
    if needs_dns_wait(role):
        steps.append(_dns_wait(hosts[1:]))
    steps.append(mpirun_line(role, main, hosts, gpu_resource))
    return " && ".join(steps)


def apply_trtllm(
    role: MultinodeRole,
    pod_spec: dict[str, Any],
    main: dict[str, Any],
    *,
    ssh_secret_name: str,
    gpu_resource: str = GPU_RESOURCE,
) -> None:
    if not role.is_leader:
        drop_probes(main, "livenessProbe", "startupProbe")
        main["readinessProbe"] = {**WORKER_READINESS, "tcpSocket": dict(WORKER_READINESS["tcpSocket"])}
    add_volume_mount(main, {"name": ssh_secret_name, "mountPath": SSH_MOUNT_PATH, "readOnly": True})
    append_env(main, dict(KEEP_FQDN_ENV))
    script = leader_script(role, main, gpu_resource) if role.is_leader else worker_script()
    main["command"] = ["/bin/sh", "-c"]
    main["args"] = [script]
    add_volume(
        pod_spec, {"name": ssh_secret_name, "secret": {"secretName": ssh_secret_name, "defaultMode": SSH_SECRET_MODE}}
    )

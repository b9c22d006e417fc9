"""vLLM multinode (docs/upstream/operator.md §2.4; upstream ``backend_vllm.go`` at the baseline).

Upstream facts beyond docs/upstream/operator.md:

* TP/PP/DP sizes are read from the container **args** only (each arg split on blanks), first occurrence whose value
  is an integer, default 1; the GPU count is the integer GPU limit (0 disables every multinode rewrite);
* TP*PP > GPUs: mp or ray launch; else TP*PP*DP > GPUs: data-parallel flags; else nothing;
* the ray leader command is ``/bin/sh -c "ray start --head --port=6379 && <quoted cmd> <quoted args>
  --distributed-executor-backend ray"`` and the ray worker only runs ``ray start --address=<leader>:6379 --block``;
* with the mp executor, ``VLLM_NIXL_SIDE_CHANNEL_HOST`` (pod IP) is set on leader and worker pods, whichever launch
  mode the args led to;
* a DGD's worker pod gets the wait-for-leader init container only when its main container's command line ends up
  with ``--distributed-executor-backend mp`` (upstream HEAD ``shouldInjectVLLMMpWaitLeaderInit``: the flag pair as
  adjacent tokens, as ``flag=mp``, or inside one shell string);
* the data-parallel worker's start rank ``$(( <local> * <rank> ))`` always needs a shell;
* multinode worker pods lose all three probes.
"""

from __future__ import annotations

from typing import Any

from functions.kube.backends.leader_wait import (
    VLLM_MP_MASTER_PORT,
    wait_leader_init_container,
    wait_leader_volume,
)
from functions.kube.backends.podparts import (
    add_init_container,
    add_volume,
    append_env,
    as_int,
    drop_probes,
    gpu_limit,
)
from functions.kube.backends.shell import inject_flags, quoted_line
from functions.kube.backends.topology import MultinodeRole, leader_host, node_rank

VLLM_CACHE_ENV = "VLLM_CACHE_ROOT"
NIXL_SIDE_CHANNEL_ENV = "VLLM_NIXL_SIDE_CHANNEL_HOST"
RAY_PORT = 6379
DATA_PARALLEL_RPC_PORT = 13445
TP_FLAG = "--tensor-parallel-size"
PP_FLAG = "--pipeline-parallel-size"
DP_FLAG = "--data-parallel-size"
DISTRIBUTED_EXECUTOR_FLAG = "--distributed-executor-backend"


def compilation_cache_env(mount_point: str) -> dict[str, Any]:
    """The env entry pointing vLLM's compilation cache at a ``useAsCompilationCache`` volume."""
    return {"name": VLLM_CACHE_ENV, "value": mount_point}


def arg_tokens(container: dict[str, Any]) -> list[str]:
    return [token for arg in container.get("args") or [] for token in str(arg).split()]


def flag_value(tokens: list[str], flag: str) -> int:
    for index, token in enumerate(tokens[:-1]):
        if token == flag:
            value = as_int(tokens[index + 1])
            if value is not None:
                return value
    return 1


def command_line_has(container: dict[str, Any], flag: str, value: str) -> bool:
    """Whether command or args carry ``flag value``: adjacent tokens, ``flag=value``, or inside a shell string."""
    line = [str(token) for token in [*(container.get("command") or []), *(container.get("args") or [])]]
    for tokens in (line, [word for token in line for word in token.split()]):
        for index, token in enumerate(tokens):
            if f"{flag} {value}" in token or f"{flag}={value}" in token:
                return True
            if token == flag and index + 1 < len(tokens) and tokens[index + 1] == value:
                return True
    return False


def _mp_flags(role: MultinodeRole) -> tuple[str, bool]:
    flags = (
        f"--distributed-executor-backend mp --nnodes {role.node_count} --master-addr {leader_host(role)} "
        f"--master-port {VLLM_MP_MASTER_PORT}"
    )
    if role.is_leader:
        return f"{flags} --node-rank 0", False
    rank, needs_shell = node_rank(role)
    return f"{flags} --node-rank {rank} --headless", needs_shell


def _ray_launch(role: MultinodeRole, main: dict[str, Any]) -> None:
    if role.is_leader:
        command = quoted_line(list(main.get("command") or []))
        args = quoted_line(list(main.get("args") or []))
        line = f"ray start --head --port={RAY_PORT} && {command} {args} --distributed-executor-backend ray"
    else:
        line = f"ray start --address={leader_host(role)}:{RAY_PORT} --block"
    main["command"] = ["/bin/sh", "-c"]
    main["args"] = [line]


def _data_parallel_flags(role: MultinodeRole, tokens: list[str], gpus: int, world: int) -> tuple[str, bool]:
    local = gpus // world
    total = flag_value(tokens, DP_FLAG)
    if total == 1:
        total = local * role.node_count
    if role.is_leader:
        start, needs_shell = "0", False
    else:
        rank, _ = node_rank(role)
        start, needs_shell = f"$(( {local} * {rank} ))", True
    flags = ["--data-parallel-hybrid-lb"]
    if DP_FLAG not in tokens:
        flags += [DP_FLAG, str(total)]
    flags += [
        "--data-parallel-size-local", str(local),
        "--data-parallel-start-rank", start,
        "--data-parallel-address", leader_host(role),
        "--data-parallel-rpc-port", str(DATA_PARALLEL_RPC_PORT),
    ]  # fmt: skip
    return " ".join(flags), needs_shell


def apply_vllm(
    role: MultinodeRole, pod_spec: dict[str, Any], main: dict[str, Any], *, executor: str, gpu_resource: str
) -> None:
    tokens = arg_tokens(main)
    gpus = gpu_limit(main, gpu_resource)
    world = flag_value(tokens, TP_FLAG) * flag_value(tokens, PP_FLAG)
    use_mp = executor == "mp"
    if gpus > 0 and world > gpus:
        if use_mp:
            inject_flags(main, *_mp_flags(role), "vllm")
        else:
            _ray_launch(role, main)
    elif gpus > 0 and world > 0 and world * flag_value(tokens, DP_FLAG) > gpus:
        inject_flags(main, *_data_parallel_flags(role, tokens, gpus, world), "vllm")
    if use_mp:
        side_channel = {"name": NIXL_SIDE_CHANNEL_ENV, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
        append_env(main, side_channel, before=VLLM_CACHE_ENV)
    if role.is_leader:
        return
    drop_probes(main)
    if role.graph_name and command_line_has(main, DISTRIBUTED_EXECUTOR_FLAG, "mp"):
        add_volume(pod_spec, wait_leader_volume(role.graph_name))
        add_init_container(pod_spec, wait_leader_init_container(main.get("image"), leader_host(role)))

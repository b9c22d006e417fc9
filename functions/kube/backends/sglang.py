"""SGLang multinode (docs/upstream/operator.md §2.4; upstream ``backend_sglang.go``).

Every pod gets ``--dist-init-addr <leader>:29500 --nnodes N --node-rank <rank>``; worker pods lose their probes.
"""

from __future__ import annotations

from typing import Any

from functions.kube.backends.podparts import drop_probes
from functions.kube.backends.shell import inject_flags
from functions.kube.backends.topology import MultinodeRole, leader_host, node_rank

SGLANG_DIST_PORT = 29500


def apply_sglang(role: MultinodeRole, main: dict[str, Any]) -> None:
    if not role.is_leader:
        drop_probes(main)
    rank, needs_shell = node_rank(role)
    flags = f"--dist-init-addr {leader_host(role)}:{SGLANG_DIST_PORT} --nnodes {role.node_count} --node-rank {rank}"
    inject_flags(main, flags, needs_shell, "sglang")

"""The wait-for-leader ConfigMap and the init container that runs it (docs/upstream/operator.md §1.2, §1.6, §2.4).

Upstream facts (``backend_vllm.go``): ConfigMap ``{dgd}-wait-leader-script`` with key ``wait-for-leader.py`` and the
graph-name label; pod volume ``wait-leader-script`` (ConfigMap source); init container ``wait-for-leader-mp`` on the
main image, mounting it read-only at ``/scripts`` and running it through ``sh -c`` (``export LEADER_HOST="<host>"
LEADER_PORT="29500" && exec python3 ...``, upstream HEAD). The host's ``$(VAR)`` references are rewritten to
``${VAR}`` so the shell expands them: Grove and LWS add their variables to init containers after ours, where kubelet
``$(VAR)`` expansion cannot see them.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

GRAPH_NAME_LABEL = "nvidia.com/dynamo-graph-deployment-name"
CONFIGMAP_SUFFIX = "wait-leader-script"
SCRIPT_KEY = "wait-for-leader.py"
VOLUME_NAME = "wait-leader-script"
MOUNT_PATH = "/scripts"
INIT_CONTAINER_NAME = "wait-for-leader-mp"
VLLM_MP_MASTER_PORT = 29500

_KUBELET_VAR = re.compile(r"\$\((\w+)\)")


@cache
def wait_leader_script() -> str:
    return Path(__file__).with_name("leader_wait_script.py").read_text(encoding="utf-8")


def wait_leader_configmap_name(graph_name: str) -> str:
    return f"{graph_name}-{CONFIGMAP_SUFFIX}"


def wait_leader_configmap(graph_name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": wait_leader_configmap_name(graph_name),
            "namespace": namespace,
            "labels": {GRAPH_NAME_LABEL: graph_name},
        },
        "data": {SCRIPT_KEY: wait_leader_script()},
    }


def shell_variables(text: str) -> str:
    """Kubelet ``$(VAR)`` references as shell ``${VAR}``."""
    return _KUBELET_VAR.sub(r"${\1}", text)


def wait_leader_volume(graph_name: str) -> dict[str, Any]:
    return {"name": VOLUME_NAME, "configMap": {"name": wait_leader_configmap_name(graph_name)}}


def wait_leader_init_container(image: str | None, leader: str) -> dict[str, Any]:
    script = (
        f'export LEADER_HOST="{shell_variables(leader)}" LEADER_PORT="{VLLM_MP_MASTER_PORT}" '
        f"&& exec python3 {MOUNT_PATH}/{SCRIPT_KEY}"
    )
    container: dict[str, Any] = {"name": INIT_CONTAINER_NAME}
    if image:
        container["image"] = image
    container["command"] = ["sh", "-c", script]
    container["volumeMounts"] = [{"name": VOLUME_NAME, "mountPath": MOUNT_PATH, "readOnly": True}]
    return container

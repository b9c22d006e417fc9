"""The MPI SSH Secret that TRT-LLM multinode pods mount (docs/upstream/at-head.md §15).

Upstream keeps one generated SSH key pair Secret (operator config ``mpi.sshSecretName``, Helm default
``mpi-run-ssh-secret``) in the operator's namespace and replicates it, under the same name, into each
namespace holding a multinode DGD. A function may not generate a key (its output must be deterministic)
and must not call the API server, so this package works from what the operator config says:

* ``mpi.sshSecretNamespace`` set: that namespace's ``mpi.sshSecretName`` is the source. The graph reads it
  as a required resource and composes a copy of its ``type`` and ``data`` named
  ``{graph}-{sshSecretName}`` in its own namespace, which its pods mount. The copy is per graph, not
  upstream's one per namespace, because a composed object belongs to exactly one composite: a second DGD
  in the namespace composing the same name would be refused.
* otherwise the pods mount ``sshSecretName`` in the graph's namespace, created by hand (docs/kinds/dgd.md). The graph
  looks it up to report whether it exists.

Either way the ``MPISSHSecretReady`` condition says whether what the pods mount exists, and why not.
"""

from __future__ import annotations

from typing import Any

from functions.api.graph import Graph
from functions.api.operator_config import OperatorConfig
from functions.contract import Condition, ResourceSelector
from functions.kube.labels import GRAPH_NAME
from functions.kube.naming import cut_with_hash

TRTLLM = "trtllm"
REQUIREMENT = "mpi-ssh-secret"
RESOURCE = "mpi-ssh-secret"
CONDITION = "MPISSHSecretReady"
# The Secret's name is also the pod's volume name, a DNS-1123 label.
MAX_NAME = 63


def needs_ssh_secret(graph: Graph, backends_by_component: dict[str, str]) -> bool:
    """Whether any multinode component of the graph runs TRT-LLM (MPI over SSH)."""
    return any(c.multinode and backends_by_component.get(c.name) == TRTLLM for c in graph.components)


def copies_secret(operator_config: OperatorConfig) -> bool:
    return bool(operator_config.mpi.sshSecretNamespace)


def ssh_secret_name(graph_name: str, operator_config: OperatorConfig) -> str:
    """The Secret the graph's pods mount: its own copy, or the hand-made one of upstream's name."""
    if copies_secret(operator_config):
        return cut_with_hash(f"{graph_name}-{operator_config.mpi.sshSecretName}", MAX_NAME, "-")
    return operator_config.mpi.sshSecretName


def ssh_secret_requirement(graph: Graph, operator_config: OperatorConfig) -> dict[str, ResourceSelector]:
    """The required resource to read: the source of the copy, or the hand-made Secret."""
    namespace = operator_config.mpi.sshSecretNamespace if copies_secret(operator_config) else graph.namespace
    selector = ResourceSelector("v1", "Secret", match_name=operator_config.mpi.sshSecretName, namespace=namespace)
    return {REQUIREMENT: selector}


def _observed(required: dict[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
    found = required.get(REQUIREMENT) or []
    return found[0] if found else None


def render_ssh_secret_copy(graph: Graph, source: dict[str, Any], name: str) -> dict[str, Any]:
    """The graph's copy of the source Secret: its type and data, nothing of its metadata."""
    secret: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": graph.namespace, "labels": {GRAPH_NAME: graph.name}},
    }
    if source.get("type"):
        secret["type"] = source["type"]
    if source.get("data"):
        secret["data"] = dict(sorted(source["data"].items()))
    return secret


def ssh_secret(
    graph: Graph, operator_config: OperatorConfig, required: dict[str, list[dict[str, Any]]]
) -> tuple[dict[str, dict[str, Any]], Condition]:
    """(composed resources, condition) for a graph whose pods mount the MPI SSH Secret."""
    source = _observed(required)
    name = ssh_secret_name(graph.name, operator_config)
    mpi = operator_config.mpi
    if copies_secret(operator_config):
        where = f"Secret {mpi.sshSecretNamespace}/{mpi.sshSecretName}"
        if source is None:
            message = (
                f"the TRT-LLM multinode pods mount Secret {name}, a copy of {where} "
                "(EnvironmentConfig/dynamo-platform data.mpi), which does not exist: create it with the keys "
                "private.key and private.key.pub"
            )
            return {}, Condition(CONDITION, "False", "SourceNotFound", message)
        desired = {RESOURCE: render_ssh_secret_copy(graph, source, name)}
        return desired, Condition(CONDITION, "True", "Copied", f"Secret {name} is a copy of {where}")
    if source is None:
        message = (
            f"the TRT-LLM multinode pods mount Secret {graph.namespace}/{name}, which does not exist and which "
            "function-dynamo does not create: create it with the keys private.key and private.key.pub, or name "
            "a source Secret to copy in EnvironmentConfig/dynamo-platform data.mpi.sshSecretNamespace"
        )
        return {}, Condition(CONDITION, "False", "NotFound", message)
    return {}, Condition(CONDITION, "True", "Found", f"Secret {graph.namespace}/{name} exists")

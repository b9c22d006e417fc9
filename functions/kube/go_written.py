"""Containers as upstream's Go structs write them into the custom resources its controllers create.

The API server stores a custom resource (a PodCliqueSet, a LeaderWorkerSet, a DynamoComponentDeployment) as the
client sent it, so what upstream stores there is what Go's JSON encoding of ``corev1.Container`` writes: no
``command`` or ``args`` when empty, and no ``value`` of an env var whose value is empty (both ``omitempty``). A
PodCliqueSet's or LeaderWorkerSet's containers and init containers always carry ``resources`` (a struct, written
as ``{}`` when nothing is set); a component deployment's pod template leaves an empty one out. A Deployment needs
none of this: the API server rewrites its pod template through the same structs. A PodCliqueSet's claim
template writes its ``templateSpec.metadata`` (an ``ObjectMeta`` struct, which ``omitempty`` does not leave out)
as ``{}`` when nothing is set.
"""

from __future__ import annotations

from typing import Any

OMITTED_WHEN_EMPTY = ("command", "args")
CONTAINER_LISTS = ("initContainers", "containers")


def go_env(env: list[Any]) -> list[Any]:
    """``env`` without the ``value`` of each var whose value is empty."""
    return [
        {k: v for k, v in var.items() if not (k == "value" and v == "")} if isinstance(var, dict) else var
        for var in env
    ]


def go_container(container: dict[str, Any], *, with_resources: bool) -> dict[str, Any]:
    """``container`` as Go writes it; with ``with_resources``, ``resources`` always there."""
    out = {k: v for k, v in container.items() if not (k in OMITTED_WHEN_EMPTY and v == [])}
    if isinstance(out.get("env"), list):
        out["env"] = go_env(out["env"])
    if with_resources:
        out.setdefault("resources", {})
    return out


def go_pod_spec(pod: dict[str, Any], *, with_resources: bool = True) -> dict[str, Any]:
    """``pod`` with each container and init container as Go writes it."""
    out = dict(pod)
    for key in CONTAINER_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [go_container(c, with_resources=with_resources) if isinstance(c, dict) else c for c in out[key]]
    return out


def go_claim_template(entry: dict[str, Any]) -> dict[str, Any]:
    """A PodCliqueSet ``resourceClaimTemplates`` entry as Go writes it: ``templateSpec.metadata`` always there."""
    spec = entry.get("templateSpec")
    if not isinstance(spec, dict):
        return entry
    return {**entry, "templateSpec": {"metadata": {}, **spec}}

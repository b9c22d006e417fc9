"""Moving running graphs between the upstream Dynamo operator and this package without restarting pods: the rules.

Both controllers name what they create alike (this package renders upstream's names), so a PodCliqueSet or a
Deployment made by one can be taken over by the other. What stands in the way is ownership: every object the
operator creates carries a controller ``ownerReference`` to its DGD (or DCD), and every object Crossplane composes
one to its XR. Deleting the owner (which replacing the CRDs does) would have the garbage collector delete the
objects, and a second controller reference is refused by the API server. So a graph is *released* first:

1. pause Crossplane's XRs (``crossplane.io/paused``), so it does not put its references back;
2. write the graphs' manifests (the objects a person applies: not those another Dynamo object composed);
3. remove every ``ownerReference`` to a Dynamo kind from the objects in the namespace (the workloads stay);
4. remove the Dynamo objects' finalizers and delete them, orphaning what they owned.

Then the other side's CRDs go in and the manifests are applied: Crossplane composes objects of the same names and
its server-side apply adopts the ones that exist (an object without a controller may be taken over), the pods'
templates unchanged where the render is the same. ``verify`` compares the objects with the inventory written at
release: same UID (adopted, not recreated), same spec (no template change, so no rollout).

Pure functions over the objects as ``kubectl get -o json`` prints them; ``functions.tooling.migrate`` does the I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from functions.api.upstream_operator import OPERATOR_FINALIZER

GROUP = "nvidia.com"
# The upstream kinds (what both sides serve) and the claims package's cluster-scoped XRs of them.
UPSTREAM_KINDS = (
    "DynamoGraphDeployment",
    "DynamoComponentDeployment",
    "DynamoGraphDeploymentScalingAdapter",
    "DynamoGraphDeploymentRequest",
    "DynamoCheckpoint",
    "DynamoModel",
)
OWNER_KINDS = frozenset(UPSTREAM_KINDS) | frozenset(f"X{k}" for k in UPSTREAM_KINDS)
# kubectl's names for the namespaced kinds, in the order a graph's objects are released (users' objects last)
RESOURCES = tuple(f"{k.lower()}s.{GROUP}" for k in UPSTREAM_KINDS)
CRDS = RESOURCES  # a CRD is named <plural>.<group>
PAUSED = "crossplane.io/paused"
XRD_KIND = "CompositeResourceDefinition"
# Metadata a manifest does not carry over: the server's, kubectl's, and Crossplane's bookkeeping.
DROPPED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", PAUSED)
DROPPED_ANNOTATION_PREFIXES = ("crossplane.io/",)
DROPPED_LABEL_PREFIXES = ("crossplane.io/",)
# Crossplane's machinery in an XR's (or claim's) spec: not the user's intent.
CROSSPLANE_SPEC_FIELDS = (
    "crossplane",
    "compositionRef",
    "compositionRevisionRef",
    "compositionRevisionSelector",
    "compositionSelector",
    "compositionUpdatePolicy",
    "resourceRef",
    "resourceRefs",
    "claimRef",
    "writeConnectionSecretToRef",
    "publishConnectionDetailsTo",
)


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def is_dynamo_ref(ref: dict[str, Any]) -> bool:
    """An ownerReference to a Dynamo object: the operator's DGD/DCD/... or this package's XR of one."""
    return str(ref.get("apiVersion", "")).split("/")[0] == GROUP and ref.get("kind") in OWNER_KINDS


def dynamo_owners(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in _meta(obj).get("ownerReferences") or [] if is_dynamo_ref(r)]


def dynamo_controller(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The Dynamo object that controls ``obj``, if one does."""
    return next((r for r in dynamo_owners(obj) if r.get("controller") is True), None)


def detach_patch(obj: dict[str, Any]) -> list[dict[str, Any]] | None:
    """A JSON patch that removes every ownerReference to a Dynamo object (None when there is none).

    It tests the resourceVersion first: an object that changed since it was read is refused, not overwritten."""
    refs = _meta(obj).get("ownerReferences") or []
    kept = [r for r in refs if not is_dynamo_ref(r)]
    if len(kept) == len(refs):
        return None
    test = {"op": "test", "path": "/metadata/resourceVersion", "value": _meta(obj).get("resourceVersion")}
    if not kept:
        return [test, {"op": "remove", "path": "/metadata/ownerReferences"}]
    return [test, {"op": "replace", "path": "/metadata/ownerReferences", "value": kept}]


def is_crossplane_xr(obj: dict[str, Any]) -> bool:
    """A Dynamo object this package serves (an XR or a claim), as opposed to one the operator's CRDs hold."""
    spec = obj.get("spec") or {}
    return any(field in spec for field in ("crossplane", "compositionRef", "resourceRefs", "resourceRef"))


def applied_by_a_person(obj: dict[str, Any]) -> bool:
    """Not composed by another Dynamo object (a DCD of a DGD, a DGDSA, a DGDR's DGD): those are composed again."""
    return not dynamo_owners(obj)


def _kept(items: dict[str, Any] | None, dropped: Iterable[str], prefixes: Iterable[str]) -> dict[str, Any]:
    dropped, prefixes = tuple(dropped), tuple(prefixes)
    return {k: v for k, v in (items or {}).items() if k not in dropped and not k.startswith(prefixes)}


def portable_manifest(obj: dict[str, Any]) -> dict[str, Any]:
    """What a person applies to get ``obj`` back on the other side: kind, name, namespace, labels,
    annotations and spec, without the server's, kubectl's or Crossplane's bookkeeping."""
    meta = _meta(obj)
    metadata: dict[str, Any] = {"name": meta["name"]}
    if meta.get("namespace"):
        metadata["namespace"] = meta["namespace"]
    labels = _kept(meta.get("labels"), (), DROPPED_LABEL_PREFIXES)
    annotations = _kept(meta.get("annotations"), DROPPED_ANNOTATIONS, DROPPED_ANNOTATION_PREFIXES)
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    spec = {k: v for k, v in (obj.get("spec") or {}).items() if k not in CROSSPLANE_SPEC_FIELDS}
    return {"apiVersion": _shape_version(obj, spec), "kind": obj["kind"], "metadata": metadata, "spec": spec}


def _shape_version(obj: dict[str, Any], spec: dict[str, Any]) -> str:
    """The apiVersion the manifest's shape belongs to. This package stores both DGD shapes under one schema and
    serves either at both versions, so kubectl reads a graph applied as v1alpha1 (``spec.services``) at v1beta1;
    both the operator and this package refuse ``spec.services`` at v1beta1 on create."""
    if obj.get("kind") == "DynamoGraphDeployment" and "services" in spec:
        return f"{GROUP}/v1alpha1"
    return str(obj["apiVersion"])


@dataclass(frozen=True)
class Held:
    """One object a Dynamo object owned when the graph was released."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str
    generation: int | None  # for the record; a Deployment's also moves with its annotations
    owner: str  # "<Kind>/<name>" of its Dynamo controller then ("" when it had only non-controller references)
    spec: Any = None  # its spec then, to name what changed if its generation moves

    @property
    def key(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
            "generation": self.generation,
            "owner": self.owner,
            "spec": self.spec,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Held:
        return cls(
            str(data["apiVersion"]),
            str(data["kind"]),
            str(data["namespace"]),
            str(data["name"]),
            str(data["uid"]),
            data.get("generation"),
            str(data.get("owner") or ""),
            data.get("spec"),
        )


def held(obj: dict[str, Any]) -> Held:
    meta = _meta(obj)
    controller = dynamo_controller(obj)
    generation = meta.get("generation")
    return Held(
        api_version=str(obj.get("apiVersion")),
        kind=str(obj.get("kind")),
        namespace=str(meta.get("namespace") or ""),
        name=str(meta.get("name")),
        uid=str(meta.get("uid")),
        generation=int(generation) if isinstance(generation, int) else None,
        owner=f"{controller['kind']}/{controller['name']}" if controller else "",
        spec=obj.get("spec"),
    )


SHOWN_DIFFERENCES = 5


def spec_differences(before: Any, after: Any, path: str = "spec") -> list[str]:
    """Where two specs differ, as ``path: old -> new`` (lists of the same length compared item by item)."""
    if isinstance(before, dict) and isinstance(after, dict):
        return [
            d
            for k in sorted(set(before) | set(after))
            for d in spec_differences(before.get(k), after.get(k), f"{path}.{k}")
        ]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            d
            for i, (b, a) in enumerate(zip(before, after, strict=True))
            for d in spec_differences(b, a, f"{path}[{i}]")
        ]
    return [] if before == after else [f"{path}: {before!r} -> {after!r}"]


@dataclass(frozen=True)
class Verdict:
    """How an object released earlier stands now."""

    before: Held
    problem: str  # "" when kept: same UID, same spec
    owner: str  # "<Kind>/<name>" of its Dynamo controller now, "" when none

    @property
    def kept(self) -> bool:
        return not self.problem


def verdict(before: Held, now: dict[str, Any] | None) -> Verdict:
    """Whether ``now`` (the live object, None when gone) is the object released earlier, its spec unchanged.

    The spec, not ``metadata.generation``: a Deployment's generation also moves when its annotations change
    (Crossplane's adoption adds one), which rolls no pod."""
    if now is None:
        return Verdict(before, "deleted", "")
    after = held(now)
    if after.uid != before.uid:
        return Verdict(before, f"recreated (uid {before.uid} -> {after.uid})", after.owner)
    changed = spec_differences(before.spec, now.get("spec"))
    if changed:
        shown = "; ".join(changed[:SHOWN_DIFFERENCES]) + ("; ..." if len(changed) > SHOWN_DIFFERENCES else "")
        return Verdict(before, f"spec changed, its pods may roll: {shown}", after.owner)
    return Verdict(before, "", after.owner)


@dataclass(frozen=True)
class Conflict:
    """A Dynamo CRD the upstream operator's installation holds (not one of this package's XRDs)."""

    crd: str
    objects: int  # objects of that kind in the cluster
    operator_managed: int  # of them, those carrying the operator's finalizer


def crd_is_from_package(crd: dict[str, Any]) -> bool:
    return any(r.get("kind") == XRD_KIND for r in _meta(crd).get("ownerReferences") or [])


def conflicts(crds: Iterable[dict[str, Any]], objects: dict[str, list[dict[str, Any]]]) -> list[Conflict]:
    """The Dynamo CRDs that exist and are not this package's; ``objects`` maps a CRD name to its objects."""
    out = []
    for crd in crds:
        name = _meta(crd).get("name")
        if name not in CRDS or crd_is_from_package(crd):
            continue
        items = objects.get(str(name), [])
        managed = sum(OPERATOR_FINALIZER in (_meta(o).get("finalizers") or []) for o in items)
        out.append(Conflict(str(name), len(items), managed))
    return sorted(out, key=lambda c: c.crd)

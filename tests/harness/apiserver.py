"""What the tests do with the real API server: install CRDs, wait for them, create objects in them."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixtures.tooling import REPO
from functions.tooling.admit_manifest import crds_by_kind
from functions.tooling.manifests import load_documents
from functions.tooling.validation import derive_crds
from harness.controlplane import APIError, Client
from harness.poll import Timeout, until

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
ESTABLISH_SECONDS = 60.0


@dataclass(frozen=True)
class Installed:
    """A CRD the API server was given: accepted (Established and served) or refused, with its message."""

    name: str
    accepted: bool
    message: str = ""


CLAIMS_XRDS = REPO / "package" / "claims" / "xrds"


def derived_crds(xrd_dir: Path = REPO / "xrds") -> list[dict[str, Any]]:
    """Every CRD Crossplane derives from the XRDs in ``xrd_dir`` (the XR's, then the claim's), by our
    derivation: the default package's (``xrds/``), or the claims package's (``CLAIMS_XRDS``)."""
    out = []
    for path in sorted(xrd_dir.glob("*.yaml")):
        for xrd in load_documents(path):
            out.extend(derive_crds(xrd))
    return out


def plural(kind: str) -> str:
    """The resource name of one of our claim or XR kinds (either package's), from the CRD derived for it."""
    crds = crds_by_kind()
    crd = crds[kind] if kind in crds else crds_by_kind(claims=True)[kind]
    return crd["spec"]["names"]["plural"]


def served_resources(client: Client, group_version: str) -> list[dict[str, Any]]:
    """The API server's discovery of one group version (``v1`` is the core group's): its resources, subresources
    left out; [] when it does not serve the group version."""
    base = f"/apis/{group_version}" if "/" in group_version else f"/api/{group_version}"
    try:
        resources = client.get(base).get("resources") or []
    except APIError as err:
        if err.code != 404:
            raise
        return []
    return [r for r in resources if "/" not in r["name"]]


def collection_of(client: Client, obj: dict[str, Any], default_namespace: str | None = None) -> str | None:
    """The collection path of ``obj``'s kind (in its namespace, else ``default_namespace``, when namespaced);
    None when the API server does not serve the kind."""
    group_version = obj["apiVersion"]
    found = next((r for r in served_resources(client, group_version) if r["kind"] == obj["kind"]), None)
    if found is None:
        return None
    base = f"/apis/{group_version}" if "/" in group_version else f"/api/{group_version}"
    namespace = (obj.get("metadata") or {}).get("namespace", default_namespace) if found["namespaced"] else None
    return base + (f"/namespaces/{namespace}" if namespace else "") + f"/{found['name']}"


def _condition(crd: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in (crd.get("status") or {}).get("conditions") or [] if c.get("type") == type_), None)


def resource_path(group: str, version: str, plural: str, namespace: str | None = None, name: str | None = None) -> str:
    base = f"/apis/{group}/{version}"
    if namespace:
        base += f"/namespaces/{namespace}"
    base += f"/{plural}"
    return f"{base}/{name}" if name else base


def install_crd(client: Client, crd: dict[str, Any]) -> Installed:
    """Create ``crd`` and wait until it is Established and its resource is served; a refusal is returned, not raised."""
    name = crd["metadata"]["name"]
    body = copy.deepcopy(crd)
    body.get("metadata", {}).pop("ownerReferences", None)  # the XRD it points at does not exist here
    try:
        client.create(CRDS, body)
    except APIError as err:
        if err.code != 409:
            return Installed(name, False, str(err.status.get("message", err)))
    spec = crd["spec"]
    version = next(v["name"] for v in spec["versions"] if v.get("served", True))
    got: dict[str, Any] = {}

    def served() -> bool:
        nonlocal got
        got = client.get(f"{CRDS}/{name}")
        established = _condition(got, "Established")
        if not established or established.get("status") != "True":
            return False
        try:
            client.get(resource_path(spec["group"], version, spec["names"]["plural"]))
        except APIError:
            return False
        return True

    try:
        until(f"{name} Established and served", served, ESTABLISH_SECONDS, every=0.2)
    except Timeout:
        conditions = (got.get("status") or {}).get("conditions")
        return Installed(name, False, f"not Established after {ESTABLISH_SECONDS:.0f}s: {conditions}")
    return Installed(name, True)


def ensure_namespace(client: Client, name: str) -> None:
    try:
        client.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    except APIError as err:
        if err.code != 409:
            raise

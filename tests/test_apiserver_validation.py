"""`function-dynamo validate` agrees with the real API server, document for document.

For every claim of the corpus and every row of the bad-input catalogue, the API server's verdict on a
server-side dry-run create (an update of the row's ``old``, for transition rules), with strict field
validation as ``kubectl apply`` asks for, is compared with the verdict of the offline validation that
``function-dynamo validate`` runs first (schema and CEL of the same derived CRD): both accept, or both
reject naming the same field paths. The rules of the function itself come after the API server and are
not part of this comparison.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fixtures.catalogue import CATALOGUE, claim
from fixtures.corpus import without_matcher_directives
from fixtures.tooling import shared_dir
from functions.tooling.admit_manifest import crds_by_kind
from functions.tooling.validation import validate
from harness.apiserver import Installed, ensure_namespace, resource_path
from harness.controlplane import APIError, ControlPlane
from harness.verdicts import GROUP, NAMESPACE, as_claim, corpus_claims, normalise, server_paths, server_verdict

# Rules the offline CEL cannot evaluate, so the two cannot agree on them: listed by name (none today).
KNOWN_DISAGREEMENTS: dict[str, str] = {}


CRDS = crds_by_kind()  # the CRDs function-dynamo validate derives from xrds/


def offline_paths(obj: dict[str, Any], old: dict[str, Any] | None) -> set[str] | None:
    """None when the offline validation accepts ``obj``, else the normalised paths of its violations."""
    result = validate(obj, CRDS[obj["kind"]], old=old)
    if result.ok:
        return None
    return {normalise(v.path) for v in result.violations}


@pytest.fixture(scope="module")
def cluster(control_plane: ControlPlane, installed: dict[str, Installed]) -> ControlPlane:
    refused = [i for i in installed.values() if not i.accepted]
    assert not refused, f"CRDs refused, so nothing can be compared: {refused}"
    ensure_namespace(control_plane.client, NAMESPACE)
    return control_plane


def _compare(cp: ControlPlane, case: str, obj: dict[str, Any], old: dict[str, Any] | None, report: list[str]) -> None:
    server = server_verdict(cp, obj, old)
    offline = offline_paths(obj, old)
    if server == offline:
        return
    if case in KNOWN_DISAGREEMENTS:
        return
    report.append(
        f"{case}: API server {'accepts' if server is None else sorted(server)}, "
        f"validate {'accepts' if offline is None else sorted(offline)}"
    )


def test_corpus_verdicts_agree(cluster: ControlPlane) -> None:
    docs = corpus_claims()
    if not docs:
        pytest.skip(f"no corpus claims: {shared_dir() / 'corpus'} missing (../shared must be laid beside the checkout)")
    disagreements: list[str] = []
    accepted = 0
    for i, (where, doc) in enumerate(docs):
        obj = as_claim(doc, f"corpus-{i}")
        _compare(cluster, where, obj, None, disagreements)
        accepted += offline_paths(obj, None) is None
    print(f"\ncorpus: {len(docs)} documents, {len(docs) - len(disagreements)} agreements, {accepted} accepted")
    assert not disagreements, "\n".join([*disagreements, cluster.where()])
    assert accepted >= len(docs) // 2  # the corpus is mostly valid: the comparison is not only of refusals


CHECKED = [row for row in CATALOGUE if row["enforced_by"] != "not-enforced"]


@pytest.mark.parametrize("row", CHECKED, ids=[r["id"] for r in CHECKED])
def test_catalogue_verdicts_agree(row: dict[str, Any], cluster: ControlPlane) -> None:
    name = f"row-{CATALOGUE.index(row)}"
    obj = claim(row, row["example"])
    obj["metadata"].update(name=name, namespace=NAMESPACE)
    old = None
    if row.get("old") is not None:
        old = claim(row, row["old"])
        old["metadata"].update(name=name, namespace=NAMESPACE)
    server = server_verdict(cluster, obj, old)
    offline = offline_paths(obj, old)
    assert server == offline, f"API server: {server}, function-dynamo validate: {offline} ({cluster.where()})"
    if row["enforced_by"] in ("xrd-schema", "xrd-cel"):
        assert server is not None and normalise(row["expect"]["path"]) in server, server
    else:  # the function's own rules: the API server stores the claim, the render step refuses it
        assert server is None


ALPHA, BETA = {"services": {"a": {}}}, {"components": [{"name": "a"}]}
# (created at, its spec, updated at, the new spec, what the update is refused for)
SHAPE_UPDATES = [
    ("v1alpha1", ALPHA, "v1beta1", {"services": {"a": {"replicas": 2}}}, None),  # Crossplane, kubectl edit
    ("v1beta1", BETA, "v1alpha1", {"components": [{"name": "a", "replicas": 2}]}, None),
    ("v1beta1", BETA, "v1beta1", ALPHA, {"spec.services"}),
    ("v1alpha1", ALPHA, "v1alpha1", BETA, {"spec.components"}),
]


@pytest.mark.parametrize(("created_at", "spec", "updated_at", "new_spec", "refused"), SHAPE_UPDATES)
def test_a_graph_keeps_its_shape_when_written_at_the_other_version(
    cluster: ControlPlane,
    created_at: str,
    spec: dict[str, Any],
    updated_at: str,
    new_spec: dict[str, Any],
    refused: set[str] | None,
) -> None:
    """An object reads at either version in the shape it was stored in (no conversion webhook), and is written
    back at the version it was read at; a shape it did not have stays the other version's. Offline, the old object
    is the stored one read at the update's version."""
    name = f"shape-{SHAPE_UPDATES.index((created_at, spec, updated_at, new_spec, refused))}"
    meta = {"name": name, "namespace": NAMESPACE}
    old = {"apiVersion": f"{GROUP}/{created_at}", "kind": "DynamoGraphDeployment", "metadata": meta, "spec": spec}
    collection = resource_path(GROUP, created_at, "dynamographdeployments", NAMESPACE)
    stored = cluster.client.request("POST", collection, old, params={"fieldValidation": "Strict"})
    try:
        update = {**old, "apiVersion": f"{GROUP}/{updated_at}", "spec": new_spec}
        update["metadata"] = {**meta, "resourceVersion": stored["metadata"]["resourceVersion"]}
        at = resource_path(GROUP, updated_at, "dynamographdeployments", NAMESPACE)
        try:
            cluster.client.request("PUT", f"{at}/{name}", update, params={"dryRun": "All", "fieldValidation": "Strict"})
            server = None
        except APIError as err:
            if err.code >= 500:
                raise
            server = server_paths(err)
    finally:
        cluster.client.delete(f"{collection}/{name}")
    assert server == refused, cluster.where()
    assert offline_paths(update, {**old, "apiVersion": update["apiVersion"]}) == refused


def test_corpus_claims_are_unchanged_by_the_matcher_directives() -> None:
    """The golden files' ``$strict``/``$ignore`` keys are what makes those documents invalid, on both sides."""
    for _, doc in corpus_claims():
        if without_matcher_directives(doc) != doc:
            assert offline_paths(as_claim(doc, "x"), None) is not None


# --- the preview renders what the API server stores -------------------------------------------------

STORED_META = ("labels", "annotations", "name", "namespace")


def _comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """What the preview must match: spec, and the metadata a user writes (the server adds uid, times, ...)."""
    meta = obj.get("metadata") or {}
    return {"spec": obj.get("spec"), "metadata": {k: meta[k] for k in STORED_META if k in meta}}


def _stored(cp: ControlPlane, obj: dict[str, Any], field_validation: str) -> dict[str, Any] | None:
    spec = CRDS[obj["kind"]]["spec"]
    version = obj["apiVersion"].split("/")[1]
    namespace = NAMESPACE if spec["scope"] == "Namespaced" else None
    path = resource_path(GROUP, version, spec["names"]["plural"], namespace)
    try:
        return cp.client.request("POST", path, obj, params={"dryRun": "All", "fieldValidation": field_validation})
    except APIError as err:
        if err.code >= 500:
            raise
        return None


def _read_back(cp: ControlPlane, obj: dict[str, Any], field_validation: str, api_version: str) -> dict[str, Any]:
    """``obj`` created, then read at ``api_version`` (as Crossplane reads an XR at its referenceable version), then
    deleted."""
    spec = CRDS[obj["kind"]]["spec"]
    namespace = NAMESPACE if spec["scope"] == "Namespaced" else None
    plural = spec["names"]["plural"]
    created_at = resource_path(GROUP, obj["apiVersion"].split("/")[1], plural, namespace)
    cp.client.request("POST", created_at, obj, params={"fieldValidation": field_validation})
    name = obj["metadata"]["name"]
    try:
        return cp.client.get(f"{resource_path(GROUP, api_version.split('/')[1], plural, namespace)}/{name}")
    finally:
        cp.client.delete(f"{created_at}/{name}")


def _with_unknown_fields(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with fields no schema declares, at the top of spec and inside each service or component."""
    obj = copy.deepcopy(doc)
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return obj
    spec["notAField"] = {"nested": True}
    for service in (spec.get("services") or {}).values():
        if isinstance(service, dict):
            service["alsoNotAField"] = 1
    for component in spec.get("components") or []:
        if isinstance(component, dict):
            component["alsoNotAField"] = [1, 2]
            for container in ((component.get("podTemplate") or {}).get("spec") or {}).get("containers") or []:
                container["notAContainerField"] = "x"
    return obj


@pytest.mark.parametrize("field_validation", ["Strict", "Warn"])
def test_the_preview_renders_what_the_api_server_stores(cluster: ControlPlane, field_validation: str) -> None:
    """For every corpus DGD (with unknown fields added, under Warn), the manifest and then the XR the preview
    renders from (the same namespaced XR, read at the referenceable version) equal what the API server stores for
    them, and reads back: pruned, nulls dropped, defaults applied."""
    from functions.tooling.admit_manifest import admit_manifest
    from functions.tooling.manifests import as_xr

    docs = corpus_claims()
    if not docs:
        pytest.skip(f"no corpus claims: {shared_dir() / 'corpus'} missing (../shared must be laid beside the checkout)")
    compared = 0
    for i, (where, doc) in enumerate(docs):
        obj = as_claim(doc, f"stored-{i}")
        if field_validation == "Warn":
            obj = _with_unknown_fields(obj)
        admission = admit_manifest(obj, field_validation=field_validation)  # type: ignore[arg-type]
        stored = _stored(cluster, obj, field_validation)
        assert (stored is None) == (admission.object is None), (where, admission.result.violations)
        if stored is None:
            continue
        assert _comparable(admission.object) == _comparable(stored), where
        # read at v1beta1, not created there: a v1alpha1 graph's spec.services is refused on create at v1beta1
        xr = as_xr(admission.object)
        assert _comparable(xr) == _comparable(_read_back(cluster, obj, field_validation, xr["apiVersion"])), where
        compared += 1
    print(f"\nstored == previewed ({field_validation}): {compared} of {len(docs)} corpus claims (the rest refused)")
    assert compared >= len(docs) // 2

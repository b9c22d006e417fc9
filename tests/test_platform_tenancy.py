"""Tenants of a DynamoPlatform: which namespaces may place graphs on it, and whose a platform's name is.

The platform publishes its tenancy in its EnvironmentConfig (``functions/kinds/platform/tenancy.py``); the placement
step reads only that, and the platform step refuses a name another namespace's platform holds. The real stack, with
impersonated tenants, is ``tests/test_crossplane_tenants.py``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fixtures.placement import PLACED, PLATFORM, by_key, read_operator_config, render_manifest
from functions.kinds.platform.tenancy import admits, holder, selector_matches
from functions.tooling.manifests import load_documents
from functions.tooling.pipeline import RenderError

Obj = dict[str, Any]
PLACEMENT_FATAL = (
    r"metadata.annotations\[nvidia.com/dynamo-platform\]: DynamoPlatform 'gpu-east' \(namespace platform\)"
)


def record(namespaces: list[str], selector: Obj | None = None, *, ready: bool = True, uid: str = "") -> Obj:
    tenants: Obj = {"namespaces": namespaces}
    if selector is not None:
        tenants["namespaceSelector"] = selector
    meta: Obj = {"name": "dynamo-platform-gpu"}
    if uid:
        meta["ownerReferences"] = [{"kind": "XDynamoPlatform", "name": "gpu-x", "uid": uid, "controller": True}]
    return {"metadata": meta, "data": {"cluster": {"namespace": namespaces[0], "ready": ready}, "tenants": tenants}}


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ({"matchLabels": {"team": "a"}}, {"team": "a", "x": "y"}, True),
        ({"matchLabels": {"team": "a"}}, {"team": "b"}, False),
        ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu", "x"]}]}, {"tier": "gpu"}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu"]}]}, {}, False),
        ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["gpu"]}]}, {}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, {"tier": ""}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, {"tier": ""}, False),
        ({"matchExpressions": [{"key": "tier", "operator": "Gt", "values": ["1"]}]}, {"tier": "2"}, False),
        ({}, {"anything": "x"}, True),
    ],
)
def test_a_namespace_selector_reads_labels_as_kubernetes_does(selector: Obj, labels: dict, matches: bool) -> None:
    assert selector_matches(selector, labels) is matches


@pytest.mark.parametrize(
    ("published", "namespace", "labels", "verdict"),
    [
        (record(["platform"]), "platform", None, True),  # its own namespace
        (record(["platform", "team-a"]), "team-a", None, True),  # listed
        (record(["platform"]), "team-b", None, False),  # the default: only its own
        (record(["platform"], {"matchLabels": {"gpu": "yes"}}), "team-b", None, None),  # the labels are needed
        (record(["platform"], {"matchLabels": {"gpu": "yes"}}), "team-b", {"gpu": "yes"}, True),
        (record(["platform"], {"matchLabels": {"gpu": "yes"}}), "team-b", {"gpu": "no"}, False),
        ({"data": {"cluster": {"namespace": "platform"}}}, "platform", None, True),  # a record of an older release
        ({"data": {"cluster": {"namespace": "platform"}}}, "team-a", None, False),
    ],
)
def test_what_a_platform_admits(published: Obj, namespace: str, labels: dict | None, verdict: bool | None) -> None:
    assert admits(published, namespace, labels) is verdict


def test_the_first_platform_to_compose_a_name_holds_it() -> None:
    assert holder(record(["platform"], uid="u1"), "u1", "platform") is None
    assert holder(record(["platform"], uid="u1"), "u2", "team-b") == "platform"
    assert holder(record(["platform"]), None, "platform") is None, "a preview: the namespace decides"
    assert holder(record(["platform"]), None, "team-b") == "platform"


# --- the steps ---------------------------------------------------------------------------------------------------


def placed_in(namespace: str) -> Obj:
    doc = load_documents(PLACED)[0]
    doc["metadata"]["namespace"] = namespace
    return doc


def test_a_graph_of_a_namespace_the_platform_does_not_admit_is_refused_naming_the_annotation() -> None:
    with pytest.raises(RenderError, match=PLACEMENT_FATAL + " does not admit graphs of namespace team-z"):
        render_manifest(placed_in("team-z"), required=[read_operator_config()])


def test_a_listed_namespace_and_a_selected_one_are_admitted() -> None:
    assert "podcliqueset" in by_key(render_manifest(placed_in("dynamo-demo"), required=[read_operator_config()]))
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-y", "labels": {}}}
    with pytest.raises(RenderError, match="does not admit graphs of namespace team-y"):
        render_manifest(placed_in("team-y"), required=[read_operator_config(), namespace])
    labelled = copy.deepcopy(namespace)
    labelled["metadata"]["labels"] = {"dynamo.example.com/gpu-east": "allowed"}  # examples/platform/aws.yaml's selector
    assert "podcliqueset" in by_key(render_manifest(placed_in("team-y"), required=[read_operator_config(), labelled]))


def test_a_graph_waits_while_its_platform_installs() -> None:
    installing = read_operator_config()
    installing["data"]["cluster"]["ready"] = False
    with pytest.raises(RenderError, match="is not ready: its prerequisites are being installed"):
        render_manifest(placed_in("dynamo-demo"), required=[installing], converge=False)


def test_a_second_platform_of_a_name_is_refused_before_it_composes_anything() -> None:
    first = read_operator_config()  # gpu-east of namespace platform holds the name
    second = load_documents(PLATFORM)[0]
    second["metadata"]["namespace"] = "team-b"
    with pytest.raises(RenderError, match=r"metadata.name: a DynamoPlatform named 'gpu-east' exists in namespace "
                       r"platform already"):  # fmt: skip
        render_manifest(second, required=[first])
    same = load_documents(PLATFORM)[0]
    assert render_manifest(same, required=[first]).composed, "its own record is no obstacle"

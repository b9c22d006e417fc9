"""The XRDs serve embedded pod specs open (functions/xrd/served.py); the function still checks them in full."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from fixtures.corpus import EXAMPLES
from fixtures.tooling import REPO, require_shared, shared_dir
from functions.tooling.offline_validation import validate_document
from functions.tooling.xrds import all_xrds, claims_xrds
from functions.xrd.served import OPEN_OBJECT, RULES, served_schema

POD_SPEC = {
    "type": "object",
    "properties": {
        "affinity": {"type": "object", "properties": {"nodeAffinity": {"type": "object", "properties": {}}}},
        "containers": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string"},
                    "image": {"type": "string"},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "env": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                    "resources": {"type": "object", "nullable": True, "properties": {"limits": {"type": "object"}}},
                },
            },
        },
        "initContainers": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "nodeSelector": {"type": "object", "additionalProperties": {"type": "string"}},
        "tolerations": {"type": "array", "items": {"type": "object", "properties": {"key": {"type": "string"}}}},
        "volumes": {"type": "array", "maxItems": 9, "items": {"type": "object", "properties": {}}},
        "hostNetwork": {"type": "boolean"},
    },
}
IMAGE_RULE = [{"rule": 'self.name == "main" || has(self.image)', "message": "sidecars need an image"}]
OPEN_LIST = {"type": "array", "items": OPEN_OBJECT}


def _with_container_rule(pod_spec: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(pod_spec)
    out["properties"]["containers"]["items"][RULES] = IMAGE_RULE
    return out


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param(POD_SPEC, OPEN_OBJECT, id="pod-spec-without-rules-opens-whole"),
        pytest.param(
            {"type": "object", "properties": {"replicas": {"type": "integer"}, "extraPodSpec": POD_SPEC}},
            {"type": "object", "properties": {"replicas": {"type": "integer"}, "extraPodSpec": OPEN_OBJECT}},
            id="found-below-other-fields",
        ),
        pytest.param(
            {"type": "object", "additionalProperties": {"type": "object", "properties": {"spec": POD_SPEC}}},
            {"type": "object", "additionalProperties": {"type": "object", "properties": {"spec": OPEN_OBJECT}}},
            id="found-in-a-map",
        ),
        pytest.param(
            {"type": "object", "properties": {"containers": POD_SPEC["properties"]["containers"]}},
            {"type": "object", "properties": {"containers": POD_SPEC["properties"]["containers"]}},
            id="not-a-pod-spec-kept",
        ),
        pytest.param(
            {**POD_SPEC, "nullable": True},
            {**OPEN_OBJECT, "nullable": True},
            id="nullable-kept",
        ),
    ],
)
def test_served_schema(schema: dict[str, Any], expected: dict[str, Any]) -> None:
    assert served_schema(schema) == expected


def test_a_rule_keeps_the_way_to_it_and_what_it_reads() -> None:
    served = served_schema(_with_container_rule(POD_SPEC))
    props = served["properties"]
    containers = props["containers"]
    assert containers["x-kubernetes-list-map-keys"] == ["name"]  # kept: its items still declare name
    item = containers["items"]
    assert item[RULES] == IMAGE_RULE
    assert item["required"] == ["name"]
    assert item["properties"]["name"] == {"type": "string"}
    assert item["properties"]["image"] == {"type": "string"}
    assert item["properties"]["args"] == {"type": "array", "items": {"type": "string"}}
    assert item["properties"]["env"] == OPEN_LIST
    assert item["properties"]["resources"] == {**OPEN_OBJECT, "nullable": True}
    assert props["affinity"] == OPEN_OBJECT
    assert props["initContainers"] == OPEN_LIST
    assert props["volumes"] == {"type": "array", "maxItems": 9, "items": OPEN_OBJECT}
    assert props["nodeSelector"] == POD_SPEC["properties"]["nodeSelector"]
    assert props["hostNetwork"] == {"type": "boolean"}


def _rules(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [r["rule"] for r in node.get(RULES) or []]
        return own + [rule for key in sorted(node) for rule in _rules(node[key])]
    if isinstance(node, list):
        return [rule for item in node for rule in _rules(item)]
    return []


def _committed(directory: str) -> dict[str, dict[str, Any]]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return {p.name: yaml.load(p.read_text(), Loader=loader) for p in sorted((REPO / directory).glob("*.yaml"))}


@pytest.mark.parametrize("directory", ["xrds", "package/claims/xrds"])
def test_the_served_xrds_keep_every_rule_and_shed_the_pod_specs(directory: str) -> None:
    """Nothing but pod specs changes: every CEL rule of the full schema is still served, and the XRDs that embed
    pod specs are much smaller. (That the committed XRDs are served_xrd of the full ones: test_api_schema.)"""
    require_shared()
    build = claims_xrds if directory.startswith("package") else all_xrds
    full = build(shared_dir() / "upstream" / "crds", served=False)
    served = _committed(directory)
    assert served.keys() == full.keys()
    for name, xrd in full.items():
        assert _rules(served[name]) == _rules(xrd), name
        full_size, served_size = len(json.dumps(xrd)), len(json.dumps(served[name]))
        if name in ("dynamographdeployments.yaml", "dynamocomponentdeployments.yaml", "dynamocheckpoints.yaml"):
            assert served_size < full_size / 2, (name, served_size, full_size)


def test_a_wrong_pod_spec_field_is_admitted_then_refused_by_the_function_naming_it() -> None:
    """The API server stores it (the pod spec is open), and the step refuses it with the field's path, so the
    graph stays as it was (Synced=False) instead of rendering a pod the API server would refuse later."""
    doc = yaml.safe_load((EXAMPLES / "dgd" / "vllm-agg.yaml").read_text())
    component = doc["spec"]["components"][0]
    component.setdefault("podTemplate", {}).setdefault("spec", {})["volumes"] = [{"name": "x", "emptyDirr": {}}]
    report = validate_document(doc, "test")
    assert any(
        "spec.components[0].podTemplate.spec.volumes[0].emptyDirr" in v and "(function)" in v for v in report.violations
    ), report.violations

"""The function's own check of an XR against its XRD's spec schema (``functions/api/schema_check.py``).

The robustness property (tests/test_robustness.py) drives it with random XRs through the gRPC server; these are
the table cases, with the exact message each gives, and the check that the per-kind compact schemas shipped as
package data are the committed XRDs'.
"""

from __future__ import annotations

from typing import Any

import pytest

from fixtures.corpus import EXAMPLES, load_claim
from fixtures.mutations import with_value
from fixtures.tooling import REPO, require_shared, shared_dir
from functions.api.graph import SpecError
from functions.api.schema_check import check_value, check_xr_spec
from functions.kinds import KINDS
from functions.kinds.graph.graph_render_step import SPEC_SCHEMA
from functions.tooling.manifests import claim_to_xr
from functions.tooling.xrds import all_xrds, dump_spec_schema, spec_schema, spec_schema_path

QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
WORKER = ("spec", "components", 1, "podTemplate", "spec")
REPLICAS = ("spec", "components", 0, "replicas")
MAIN = (*WORKER, "containers", 0)
MAIN_PATH = "spec.components[1].podTemplate.spec.containers[0]"


def _xr(claim: str, folder: str = "dgd") -> dict[str, Any]:
    return claim_to_xr(load_claim(EXAMPLES / folder / claim))


V1BETA1 = _xr("vllm-agg.yaml")


def _with(path: tuple[str | int, ...], value: Any, xr: dict[str, Any] = V1BETA1) -> dict[str, Any]:
    return with_value(xr, path, value)


def _message(xr: dict[str, Any]) -> str:
    with pytest.raises(SpecError) as info:
        check_xr_spec(xr, SPEC_SCHEMA)
    return str(info.value)


@pytest.mark.parametrize(
    ("xr", "message"),
    [
        (_with((*MAIN, "env"), [None]), f"{MAIN_PATH}.env[0]: must be of type object, not null"),
        (_with((*MAIN, "env"), "DYN_LOG=info"), f"{MAIN_PATH}.env: must be of type array, not string"),
        (_with((*MAIN, "env"), [{"value": "x"}]), f"{MAIN_PATH}.env[0].name: Field required"),
        (_with((*MAIN, "image"), 5), f"{MAIN_PATH}.image: must be of type string, not integer"),
        (
            _with((*WORKER, "volumes"), [None]),
            "spec.components[1].podTemplate.spec.volumes[0]: must be of type object, not null",
        ),
        (_with((*MAIN, "command"), "python3 -m dynamo"), f"{MAIN_PATH}.command: must be of type array, not string"),
        (_with((*MAIN, "args"), [["--model"]]), f"{MAIN_PATH}.args[0]: must be of type string, not array"),
        (
            _with(("spec", "components", 1, "podTemplate"), [{"spec": {}}]),
            "spec.components[1].podTemplate: must be of type object, not array",
        ),
        (
            _with(("spec", "backendFramework"), "pytorch"),
            'spec.backendFramework: Unsupported value: "pytorch": supported values: "sglang", "vllm", "trtllm"',
        ),
        (
            _with((*MAIN, "resources", "limits", "cpu"), "lots"),
            f'{MAIN_PATH}.resources.limits.cpu: "lots" does not match {QUANTITY}',
        ),
        (
            _with((*MAIN, "resources", "limits", "cpu"), [1]),
            f"{MAIN_PATH}.resources.limits.cpu: must be an integer or a string, not array",
        ),
        (_with(REPLICAS, -1), "spec.components[0].replicas: Input should be greater than or equal to 0"),
        (_with(REPLICAS, True), "spec.components[0].replicas: must be of type integer, not boolean"),
        (_with(REPLICAS, 1.5), "spec.components[0].replicas: must be of type integer, not number"),
        (_with(("spec", "components", 0, "replica"), 1), "spec.components[0].replica: Extra inputs are not permitted"),
        (
            _with((*WORKER, "containers"), [{"name": "main"}, {"name": "main"}]),
            'spec.components[1].podTemplate.spec.containers[1]: duplicate entry {"name": "main"}',
        ),
        (_with(("spec", "components"), {"Frontend": {}}), "spec.components: must be of type array, not object"),
        (_with(("spec",), ["components"]), "spec: must be of type object, not array"),
    ],
    ids=[
        "env-item-null", "env-string", "env-name-missing", "image-number", "volume-null", "command-string",
        "args-item-list", "podTemplate-list", "bad-enum", "bad-quantity", "quantity-list", "below-minimum",
        "bool-not-int", "fraction-not-int", "unknown-field", "duplicate-container", "components-map", "spec-list",
    ],
)  # fmt: skip
def test_a_violation_is_a_spec_error_naming_the_field(xr: dict[str, Any], message: str) -> None:
    assert _message(xr) == message


def test_v1alpha1_services_are_named_by_their_key() -> None:
    xr = _with(("spec", "services", "SglangWorker", "replicas"), "two", _xr("sglang-multinode.yaml", "v1alpha1"))
    assert _message(xr) == "spec.services.SglangWorker.replicas: must be of type integer, not string"


@pytest.mark.parametrize(
    "xr",
    [
        V1BETA1,
        _with((*MAIN, "env"), None),  # a null the API server prunes: absent, as in real recipes
        _with(("spec", "components", 0, "podTemplate"), None),
        _with(("spec", "claimRef"), {"anything": ["Crossplane's own fields are not the Dynamo API"]}),
        _with(("spec", "providerOverride"), {"apiVersion": "example.com/v1", "value": {"free": {"form": [1]}}}),
        _with((*MAIN, "resources", "limits", "cpu"), 2),
        {"metadata": {"name": "no-spec"}},  # left to the step's own checks
    ],
    ids=["example", "env-null", "podTemplate-null", "claimRef", "preserve-unknown", "quantity-int", "no-spec"],
)
def test_what_the_api_server_admits_passes(xr: dict[str, Any]) -> None:
    check_xr_spec(xr, SPEC_SCHEMA)


INTEGER, STRING = {"type": "integer"}, {"type": "string"}
MAP = {"type": "object", "additionalProperties": STRING}


@pytest.mark.parametrize(
    ("node", "value", "message"),
    [
        ({"type": "string", "nullable": True}, None, None),
        ({"type": "string"}, None, "x: must be of type string, not null"),
        ({"x-kubernetes-int-or-string": True, "pattern": "^a$"}, 7, None),
        ({"x-kubernetes-int-or-string": True, "pattern": "^a$"}, "a\n", 'x: "a\\n" does not match ^a$'),
        ({"type": "string", "maxLength": 3}, "four", "x: String should have at most 3 characters"),
        ({"type": "array", "minItems": 1}, [], "x: List should have at least 1 item, not 0"),
        ({"type": "array", "x-kubernetes-list-type": "set", "items": INTEGER}, [1, 2, 1], "x[2]: duplicate entry 1"),
        (MAP, {"a.b/c": 1}, "x[a.b/c]: must be of type string, not integer"),
        ({**MAP, "maxProperties": 1}, {"a": "", "b": ""}, "x: Object should have at most 1 entry"),
        ({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, {"any": {"thing": None}}, None),
        ({"type": "object"}, {"any": 1}, "x.any: Extra inputs are not permitted"),
        ({"type": "boolean", "enum": [True]}, 1, "x: must be of type boolean, not integer"),
        ({"type": "number", "maximum": 1}, float("inf"), "x: must be a finite number"),
    ],
    ids=[
        "nullable", "null", "int-or-string", "re2-dollar", "maxLength", "minItems", "set", "map-key", "maxProperties",
        "preserve-unknown", "closed-object", "bool-enum", "inf",
    ],
)  # fmt: skip
def test_keywords(node: dict[str, Any], value: Any, message: str | None) -> None:
    if message is None:
        check_value(value, node, "x")
        return
    with pytest.raises(SpecError) as info:
        check_value(value, node, "x")
    assert str(info.value) == message


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.claim_kind)
def test_the_shipped_spec_schemas_are_the_full_xrds(kind: Any) -> None:
    """The compact schema each step checks is the full XRD's (the packages serve pod specs open; both are
    written by `function-dynamo xrds`)."""
    require_shared()
    full = all_xrds(shared_dir() / "upstream" / "crds", served=False)[kind.xrd_file]
    committed = spec_schema_path(REPO, kind).read_text()
    assert committed == dump_spec_schema(spec_schema(full)), (
        f"{spec_schema_path(REPO, kind).relative_to(REPO)} is stale: run `function-dynamo xrds`"
    )

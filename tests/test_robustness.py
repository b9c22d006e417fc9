"""Robustness of the real gRPC server: random and mutated DGD specs, oversized and deeply nested requests.

The contract: every response to a GraphDeployment request is either schema-valid composed resources
(the PodCliqueSet against Grove's CRD, the rest against Kubernetes' built-in schemas, strict) or a
Fatal result whose message starts with a field path - never a gRPC error, a crash or a hang.

The contract holds whether or not the XR passed the API server: the function checks the XR's spec
against its XRD's structural schema itself (``functions/api/schema_check.py``: types, required,
enums, patterns, bounds, unknown fields, the embedded Kubernetes types such as a podTemplate
included; CEL rules left out), so an XR the API server would reject - a hand-written one given to
``crossplane render``, or one stored before a schema change - gets a Fatal naming its first bad
field. The properties below assert it for the XRs the XR's CRD admits and for those it rejects.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import grpc
import kubernetes_validate
import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import json_format, struct_pb2
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from fixtures.corpus import EXAMPLE_CLAIMS, as_upstream_admits, corpus_dgds, load_claim
from fixtures.rendering import kubernetes_schema_version
from fixtures.tooling import REPO, require_crds
from functions.tooling.manifests import claim_to_xr, load_documents
from functions.tooling.validation import derive_crds, load_crds, validate_object
from harness.server import serving

INPUT = {"apiVersion": "dynamo.fn.crossplane.io/v1beta1", "kind": "GraphDeployment"}
DEADLINE_SECONDS = 10  # per RunFunction call: a hang fails the test instead of stalling the suite
MIB = 1024 * 1024
(PLATFORM,) = load_documents(REPO / "examples" / "operator-config.yaml")

QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?(\d+(\.\d*)?|\.\d+))?$")

# A Fatal message must start with the field it is about.
FIELD_PATH = re.compile(r"^(?:(?:spec|metadata)(?:[.\[:]|$)|EnvironmentConfig/dynamo-platform data\.)")


def _xr(claim: dict[str, Any]) -> dict[str, Any]:
    claim = copy.deepcopy(claim)
    claim.setdefault("metadata", {}).setdefault("namespace", "corpus")
    return claim_to_xr(claim)


# The seeds mutations start from: the example claims, plus the shared corpus when it is there (with the runtime
# version upstream wants where its image tags name none, so that they render).
SEEDS: dict[str, dict[str, Any]] = {p.stem: _xr(load_claim(p)) for p in EXAMPLE_CLAIMS}
SEEDS |= {
    doc_id: _xr(as_upstream_admits(yaml.safe_load(yaml.safe_dump(doc))))
    for doc_id, doc in corpus_dgds()
    if doc.get("spec")
}


# --- the gRPC client ------------------------------------------------------------------------------


def request(xr: dict[str, Any], operator_config: dict[str, Any] | None = None) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "robustness"
    req.observed.composite.resource.update(xr)
    req.input.update(INPUT)
    if operator_config is not None:
        req.required_resources["platform"].items.add().resource.update(operator_config)
    return req


@contextlib.contextmanager
def client(address: str) -> Iterator[grpcv1.FunctionRunnerServiceStub]:
    # The client lifts its own size limits: only the server's are under test.
    options = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]
    with grpc.insecure_channel(address, options=options) as channel:
        yield grpcv1.FunctionRunnerServiceStub(channel)


def call(stub: grpcv1.FunctionRunnerServiceStub, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    return stub.RunFunction(req, timeout=DEADLINE_SECONDS)


def _integral(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def as_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct as JSON data with integral numbers as ints (as Crossplane reads them); independent of fn.py."""
    return _integral(json_format.MessageToDict(struct))


def assert_serves(stub: grpcv1.FunctionRunnerServiceStub) -> None:
    """The server is alive and renders a normal request."""
    rsp = call(stub, request(SEEDS["vllm-agg"]))
    assert list(rsp.results) == [] and "podcliqueset" in rsp.desired.resources


# --- the oracle -----------------------------------------------------------------------------------


# Custom kinds the function composes, validated against their real CRDs (the rest: kubernetes-validate);
# the package's own kinds (nested composites: the scaling adapters) against the CRDs derived from xrds/.
CRD_GROUPS = ("grove.io", "networking.istio.io", "inference.networking.k8s.io", "nvidia.com")


class Checker:
    """Judges responses; caches validation by content (mutations leave most resources unchanged)."""

    def __init__(self, grove: dict, xr_crd: dict[str, Any]) -> None:
        self.grove = grove
        self.xr_crd = xr_crd
        self.cache: dict[str, str | None] = {}

    def admitted(self, xr: dict[str, Any]) -> bool:
        """Whether the API server would store ``xr`` (so that Crossplane could send it to the function)."""
        return validate_object(xr, self.xr_crd) == []

    def violations(self, obj: dict[str, Any]) -> str | None:
        """None when ``obj`` is schema-valid, else why not."""
        key = json.dumps(obj, sort_keys=True)
        if key not in self.cache:
            self.cache[key] = self._violations(obj)
        return self.cache[key]

    def _violations(self, obj: dict[str, Any]) -> str | None:
        api_version = str(obj.get("apiVersion", ""))
        group = api_version.split("/")[0] if "/" in api_version else ""
        if group in CRD_GROUPS:
            crd = self.grove.get((group, obj.get("kind")))
            if crd is None:
                return f"no CRD for {group} kind {obj.get('kind')!r}"
            return "\n".join(map(str, validate_object(obj, crd))) or None
        try:
            kubernetes_validate.validate(obj, kubernetes_schema_version(obj), strict=True)
        except (kubernetes_validate.ValidationError, kubernetes_validate.SchemaNotFoundError) as err:
            return str(err)
        return None

    def check(self, rsp: fnv1.RunFunctionResponse, *, schema_valid: bool = True) -> str:
        """'fatal' or 'rendered'; raises AssertionError when the response breaks the contract.

        ``schema_valid=False`` only relaxes the check of rendered resources (for XRs the API server rejects).
        """
        assert rsp.meta.tag == "robustness"
        fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
        if fatal:
            assert len(fatal) == 1, fatal
            assert FIELD_PATH.match(fatal[0]), f"Fatal message without a field path: {fatal[0]!r}"
            assert list(rsp.desired.resources) == [], "a Fatal result must leave the desired state untouched"
            return "fatal"
        workloads = [n for n in rsp.desired.resources if n == "podcliqueset" or n.startswith("component-")]
        assert workloads, f"no workload (a PodCliqueSet or DCDs) among {sorted(rsp.desired.resources)}"
        if schema_valid:
            for name in sorted(rsp.desired.resources):
                obj = as_dict(rsp.desired.resources[name].resource)
                problem = self.violations(obj)
                assert problem is None, f"desired resource {name} ({obj.get('kind')}) is invalid:\n{problem}"
        return "rendered"


@pytest.fixture(scope="module")
def checker() -> Checker:
    (xrd,) = load_documents(REPO / "package" / "claims" / "xrds" / "dynamographdeployments.yaml")
    xr_crd = next(c for c in derive_crds(xrd) if c["spec"]["names"]["kind"] == "XDynamoGraphDeployment")
    crds = {k: v for name in ("grove", "istio", "gaie") for k, v in load_crds(require_crds(name)).items()}
    package = [
        crd for d in ("package/claims/xrds", "xrds") for xrd in load_documents(REPO / d) for crd in derive_crds(xrd)
    ]
    crds |= {("nvidia.com", crd["spec"]["names"]["kind"]): crd for crd in package}
    return Checker(crds, xr_crd)


@pytest.fixture(scope="module")
def stub() -> Iterator[grpcv1.FunctionRunnerServiceStub]:
    """A client of a default server (`serve --insecure`: 4 MiB limit, protobuf's nesting limit)."""
    with serving("--insecure") as address, client(address) as stub:
        yield stub


def _response(*messages: str, resources: dict[str, dict[str, Any]] | None = None) -> fnv1.RunFunctionResponse:
    rsp = fnv1.RunFunctionResponse()
    rsp.meta.tag = "robustness"
    for message in messages:
        rsp.results.add(severity=fnv1.SEVERITY_FATAL, message=message)
    for name, obj in (resources or {}).items():
        rsp.desired.resources[name].resource.update(obj)
    return rsp


def test_the_oracle_can_fail(stub: grpcv1.FunctionRunnerServiceStub, checker: Checker) -> None:
    """The checks pass a real response and reject crashes, pathless Fatals and invalid resources."""
    good = call(stub, request(SEEDS["vllm-agg"]))
    assert checker.check(good) == "rendered"
    for message in ("internal error in function-dynamo: KeyError: 'x'", "boom", "components[0]: bad", "specs: x"):
        with pytest.raises(AssertionError, match="without a field path"):
            checker.check(_response(message))
    checker.check(_response("spec.components[0].replicas: must be >= 0"))  # the shape that passes
    with pytest.raises(AssertionError, match="untouched"):
        checker.check(_response("spec: bad", resources={"x": {"kind": "ConfigMap"}}))
    with pytest.raises(AssertionError, match="no workload"):
        checker.check(_response())
    pcs = {"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet", "metadata": {"name": "x"}, "spec": {"x": 1}}
    with pytest.raises(AssertionError, match="invalid"):
        checker.check(_response(resources={"podcliqueset": pcs}))
    checker.check(_response(resources={"podcliqueset": pcs}), schema_valid=False)
    good.desired.resources["service-x"].resource.update(
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": "80"}}
    )
    with pytest.raises(AssertionError, match="service-x"):
        checker.check(good)
    xr = copy.deepcopy(SEEDS["vllm-agg"])
    assert checker.admitted(xr)
    xr["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["image"] = 5
    assert not checker.admitted(xr)


# --- strategies -----------------------------------------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)  # protobuf strings are UTF-8
NUMBERS = st.sampled_from([0, -1, 1, 2, -(2**31) - 1, 2**31, 2**53, -(2**63), 2**64, 1e30, -1e308, 0.5, -2.5])
SCALARS = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | NUMBERS | TEXT | st.sampled_from(["", "0", "-1"])
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=12
)
KNOWN_KEYS = st.sampled_from(
    [
        "services", "components", "backendFramework", "envs", "env", "annotations", "labels", "pvcs", "restart",
        "topologyConstraint", "priorityClassName", "experimental", "name", "type", "componentType", "replicas",
        "multinode", "nodeCount", "podTemplate", "extraPodSpec", "mainContainer", "containers", "image", "resources",
        "limits", "requests", "gpu", "cpu", "custom", "modelRef", "sharedMemorySize", "sharedMemory",
        "dynamoNamespace", "providerOverride", "minAvailable", "globalDynamoNamespace", "frontendSidecar",
    ]
)  # fmt: skip
UNICODE = st.sampled_from(["é", "名前", "\u0000", "a\nb", "\u202e", "🚀", "x" * 300, " ", "../..", "A-B", "-1", "1Gi"])
WORDS = st.sampled_from(["", "worker", "frontend", "prefill", "decode", "planner", "vllm", "sglang", "trtllm", "main"])
STRINGS = st.from_regex(r"[a-z]([a-z0-9-]{0,14}[a-z0-9])?", fullmatch=True) | WORDS | UNICODE | TEXT


def _retype(value: Any) -> list[Any]:
    """Values of another JSON type that still resemble ``value``."""
    if isinstance(value, bool):
        return [str(value).lower(), int(value), [value]]
    if isinstance(value, int | float):
        return [str(value), [value], {"value": value}, value != 0]
    if isinstance(value, str):
        return [[value], {value: value}, len(value), value.isdigit()]
    if isinstance(value, list):
        return [{str(i): v for i, v in enumerate(value)}, value[0] if value else "", json.dumps(value)]
    if isinstance(value, dict):
        return [list(value.values()), list(value), json.dumps(value, sort_keys=True)]
    return [{}, [], ""]


def _tweak(draw: st.DrawFn, value: Any) -> Any:
    """A value of the same JSON type (these mutations mostly pass the schema and reach the function's own rules)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return draw(NUMBERS.filter(lambda n: isinstance(n, int)) | st.integers(-3, 70))
    if isinstance(value, str):
        return draw(STRINGS)
    if isinstance(value, list):
        if not value:
            return [draw(JSON)]
        choice = draw(st.sampled_from(["drop", "duplicate", "reverse", "empty"]))
        index = draw(st.integers(0, len(value) - 1))
        if choice == "drop":
            return value[:index] + value[index + 1 :]
        if choice == "duplicate":
            return [*value, copy.deepcopy(value[index])]
        return value[::-1] if choice == "reverse" else []
    if isinstance(value, dict) and value:
        dropped = draw(st.sampled_from(sorted(value)))
        return {k: v for k, v in value.items() if k != dropped}
    return draw(JSON)


def _paths(node: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """Every path (tuple of dict keys / list indexes) under ``node``, parents before children."""
    if isinstance(node, dict):
        items: Any = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return
    for key, child in items:
        yield (*prefix, key)
        yield from _paths(child, (*prefix, key))


def _parent(root: Any, path: tuple) -> Any:
    for key in path[:-1]:
        root = root[key]
    return root


# "tweak" (same type) is weighted up: type-preserving mutations are the ones that reach the function's rules.
MUTATIONS = ("tweak", "tweak", "tweak", "delete", "replace", "retype", "insert", "number", "unicode", "empty")


@st.composite
def mutated(draw: st.DrawFn, seed: str) -> dict[str, Any]:
    """The XR of seed ``seed`` with 1-3 random mutations at any depth of its spec and metadata."""
    xr = copy.deepcopy(SEEDS[seed])
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(xr) if p[0] in ("spec", "metadata")]
        if not paths:  # both gone: put a random spec back
            xr["spec"] = draw(JSON)
            continue
        path = draw(st.sampled_from(paths))
        parent, key = _parent(xr, path), path[-1]
        op = draw(st.sampled_from(MUTATIONS))
        if op == "tweak":
            parent[key] = _tweak(draw, parent[key])
        elif op == "delete":
            del parent[key]
        elif op == "replace":
            parent[key] = draw(JSON)
        elif op == "retype":
            parent[key] = draw(st.sampled_from(_retype(parent[key])))
        elif op == "insert":
            target = parent[key] if isinstance(parent[key], dict | list) else parent
            value = draw(JSON)
            if isinstance(target, dict):
                target[draw(KNOWN_KEYS | TEXT)] = value
            else:
                target.insert(draw(st.integers(0, len(target))), value)
        elif op == "number":
            parent[key] = draw(NUMBERS)
        elif op == "unicode":
            parent[key] = draw(UNICODE)
        else:
            parent[key] = draw(st.sampled_from(["", {}, [], None, 0]))
    return xr


@st.composite
def random_xr(draw: st.DrawFn) -> dict[str, Any]:
    """A fully random JSON-like spec (sometimes with a shape key), under valid or random metadata."""
    spec = draw(st.dictionaries(KNOWN_KEYS | TEXT, JSON, max_size=5))
    shape = draw(st.sampled_from([None, "services", "components"]))
    entry = st.dictionaries(KNOWN_KEYS | TEXT, JSON, max_size=4)
    if shape == "services":
        spec["services"] = draw(st.dictionaries(TEXT, entry, max_size=3))
    elif shape == "components":
        spec["components"] = draw(st.lists(entry, max_size=3))
    metadata = draw(st.just({"name": "random", "namespace": "fuzz"}) | st.dictionaries(st.sampled_from(["name"]), JSON))
    return {"apiVersion": "nvidia.com/v1alpha1", "kind": "XDynamoGraphDeployment", "metadata": metadata, "spec": spec}


@st.composite
def mutated_platform(draw: st.DrawFn) -> dict[str, Any] | None:
    """No operator config, the example one, or the example one with a field of its data changed."""
    choice = draw(st.sampled_from(["none", "example", "mutated"]))
    if choice == "none":
        return None
    operator_config = copy.deepcopy(PLATFORM)
    if choice == "mutated":
        path = draw(st.sampled_from(list(_paths(operator_config["data"], ("data",)))))
        _parent(operator_config, path)[path[-1]] = draw(JSON | UNICODE | NUMBERS)
    return operator_config


MUTATED = st.sampled_from(sorted(SEEDS)).flatmap(mutated)
CASES = st.tuples(st.one_of(MUTATED, MUTATED, MUTATED, random_xr()), mutated_platform())  # 3:1 mutated:random
SETTINGS = settings(
    derandomize=True,  # a fixed sequence of examples: the same run every time
    deadline=DEADLINE_SECONDS * 1000,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_random_and_mutated_specs_get_valid_resources_or_a_field_path(
    stub: grpcv1.FunctionRunnerServiceStub, checker: Checker
) -> None:
    stats: Counter[str] = Counter()
    started = time.monotonic()

    @settings(SETTINGS, max_examples=350)
    @given(CASES)
    def property_(case: tuple[dict[str, Any], dict[str, Any] | None]) -> None:
        xr, operator_config = case
        admitted = checker.admitted(xr)
        try:
            rsp = call(stub, request(xr, operator_config))
        except grpc.RpcError as err:
            raise AssertionError(f"gRPC error {err.code()}: {err.details()}") from None
        stats["examples"] += 1
        stats["admitted" if admitted else "rejected"] += 1
        if admitted:
            stats[f"admitted/{checker.check(rsp)}"] += 1
            return
        # The API server would not have stored this XR; still no gRPC error or hang, and the function's
        # own errors name their field. (The full contract for these is test_..._rejects_... below.)
        if any("internal error in function-dynamo" in r.message for r in rsp.results):
            stats["rejected/internal-error"] += 1
            return
        outcome = checker.check(rsp, schema_valid=False)
        stats[f"rejected/{outcome}"] += 1
        if outcome == "rendered":
            names = sorted(rsp.desired.resources)
            if any(checker.violations(as_dict(rsp.desired.resources[n].resource)) for n in names):
                stats["rejected/rendered-invalid"] += 1

    property_()
    elapsed = time.monotonic() - started
    print(f"\nrobustness: {stats['examples']} examples in {elapsed:.1f}s: {dict(sorted(stats.items()))}")
    assert stats["examples"] >= 250, stats
    assert stats["admitted/rendered"] >= 30, stats  # the mutations do not only produce garbage
    assert stats["admitted/fatal"] >= 5, stats  # admitted specs the function refuses: the Fatal path is exercised
    assert stats["rejected"] >= 100, stats


def test_specs_the_api_server_rejects_also_get_valid_resources_or_a_field_path(
    stub: grpcv1.FunctionRunnerServiceStub, checker: Checker
) -> None:
    @settings(SETTINGS, max_examples=60, phases=[Phase.generate], report_multiple_bugs=False)
    @given(CASES)
    def property_(case: tuple[dict[str, Any], dict[str, Any] | None]) -> None:
        xr, operator_config = case
        checker.check(call(stub, request(xr, operator_config)))

    property_()


# --- targeted cases -------------------------------------------------------------------------------


def _with(seed: str, path: tuple, value: Any) -> dict[str, Any]:
    xr = copy.deepcopy(SEEDS[seed])
    _parent(xr, path)[path[-1]] = value
    return xr


@pytest.mark.parametrize(
    ("xr", "where"),
    [
        ({**SEEDS["vllm-agg"], "spec": "components"}, "spec:"),
        ({**SEEDS["vllm-agg"], "metadata": ["vllm-agg"]}, "metadata:"),
        (_with("vllm-agg", ("spec", "claimRef"), "x"), "spec.claimRef:"),
        (_with("vllm-agg", ("metadata", "labels"), ["x"]), "metadata.labels:"),
        (_with("vllm-agg", ("spec", "claimRef", "namespace"), "é"), "spec.claimRef.namespace:"),
        (_with("vllm-agg", ("spec", "claimRef", "namespace"), " "), "spec.claimRef.namespace:"),
        (_with("vllm-agg", ("spec", "claimRef", "name"), "Not_A_Name"), "spec.claimRef.name:"),
        (_with("vllm-agg", ("spec", "claimRef", "name"), 7), "spec.claimRef.name:"),
        (_with("vllm-agg", ("metadata", "annotations"), {"nvidia.com/enable-grove": 1}), "metadata.annotations["),
    ],
    ids=["spec", "metadata", "claimRef", "labels", "ns-unicode", "ns-blank", "name", "name-type", "annotation"],
)
def test_malformed_identity_is_a_fatal_naming_the_field(
    stub: grpcv1.FunctionRunnerServiceStub, checker: Checker, xr: dict[str, Any], where: str
) -> None:
    """Found by the property above: these crashed (internal error) or rendered into an invalid namespace."""
    rsp = call(stub, request(xr))
    assert checker.check(rsp) == "fatal"
    assert rsp.results[0].message.startswith(where), rsp.results[0].message


@pytest.mark.parametrize("field", ["cpu", "custom"])
def test_v1alpha1_resource_that_is_not_a_quantity_is_a_fatal(
    stub: grpcv1.FunctionRunnerServiceStub, checker: Checker, field: str
) -> None:
    value: Any = {"ephemeral-storage": "é"} if field == "custom" else "lots"
    xr = _with("sglang-multinode", ("spec", "services", "SglangWorker", "resources", "requests"), {field: value})
    assert checker.admitted(xr)
    rsp = call(stub, request(xr))
    assert checker.check(rsp) == "fatal"
    assert rsp.results[0].message.startswith("spec.services.SglangWorker.resources.requests.")
    assert "is not a Kubernetes quantity" in rsp.results[0].message


@pytest.mark.parametrize("number", [float("nan"), float("inf")])
def test_a_non_finite_number_is_a_fatal_not_a_grpc_error(stub: grpcv1.FunctionRunnerServiceStub, number: float) -> None:
    """JSON has no NaN/Infinity, so Crossplane never sends them; protobuf can, and the server must answer."""
    rsp = call(stub, request(_with("vllm-agg", ("spec", "components", 0, "replicas"), number)))
    assert [r.severity for r in rsp.results] == [fnv1.SEVERITY_FATAL]
    assert list(rsp.desired.resources) == []
    assert_serves(stub)


# --- message size and nesting limits --------------------------------------------------------------


def oversized_request() -> fnv1.RunFunctionRequest:
    """A normal request plus a 5 MiB observed resource (a big ConfigMap): over gRPC's default 4 MiB."""
    req = request(SEEDS["sglang-multinode"])
    bulk = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bulk"}, "data": {"blob": "x" * (5 * MIB)}}
    req.observed.resources["bulk"].resource.update(bulk)
    assert req.ByteSize() > 5 * MIB
    return req


def deep_request(depth: int) -> fnv1.RunFunctionRequest:
    """A request whose spec.providerOverride.value (free-form) nests ``depth`` objects."""
    node: dict[str, Any] = {"leaf": True}
    for level in range(depth):
        node = {f"level{level}": node}
    xr = copy.deepcopy(SEEDS["vllm-agg"])
    xr["spec"]["providerOverride"] = {"apiVersion": "example.com/v1", "value": node}
    return request(xr)


DEEP = 40  # objects nested in the free-form field: past protobuf's limit (~26 there, ~32 from the root)


def test_a_request_over_4_mib_is_resource_exhausted_and_the_server_keeps_serving(
    stub: grpcv1.FunctionRunnerServiceStub,
) -> None:
    with pytest.raises(grpc.RpcError) as info:
        call(stub, oversized_request())
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, info.value
    assert "larger than max" in info.value.details(), info.value.details()
    assert_serves(stub)


def test_a_request_over_4_mib_is_served_with_a_larger_max_recv_message_size(checker: Checker) -> None:
    with serving("--insecure", "--max-recv-message-size", "16") as address, client(address) as stub:
        rsp = call(stub, oversized_request())
        assert checker.check(rsp) == "rendered"
        assert "wait-leader-configmap" in rsp.desired.resources


def test_a_deeply_nested_request_is_a_clear_grpc_error_and_the_server_keeps_serving(
    stub: grpcv1.FunctionRunnerServiceStub, checker: Checker
) -> None:
    assert checker.check(call(stub, deep_request(10))) == "rendered"  # nesting itself is fine
    with pytest.raises(grpc.RpcError) as info:
        call(stub, deep_request(DEEP))
    assert info.value.code() != grpc.StatusCode.DEADLINE_EXCEEDED, info.value
    assert "MaxDepth" in info.value.details(), info.value.details()  # names the limit it hit
    assert_serves(stub)


def test_a_deeply_nested_request_is_served_with_allow_oversize_protos(checker: Checker) -> None:
    with serving("--insecure", "--allow-oversize-protos") as address, client(address) as stub:
        for depth in (DEEP, 200):
            assert checker.check(call(stub, deep_request(depth))) == "rendered"
        assert_serves(stub)


def _without_grove(xr: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(xr)
    if isinstance(out.get("metadata"), dict):
        annotations = out["metadata"].get("annotations")
        out["metadata"]["annotations"] = {**(annotations if isinstance(annotations, dict) else {})}
        out["metadata"]["annotations"]["nvidia.com/enable-grove"] = "false"
    return out


def test_on_the_component_pathway_too(stub: grpcv1.FunctionRunnerServiceStub, checker: Checker) -> None:
    """The same contract for graphs without Grove: valid DynamoComponentDeployments (against the XRD's CRD)
    and the graph's own resources, or a Fatal naming the field."""
    stats: Counter[str] = Counter()

    @settings(SETTINGS, max_examples=200)
    @given(CASES)
    def property_(case: tuple[dict[str, Any], dict[str, Any] | None]) -> None:
        xr, operator_config = _without_grove(case[0]), case[1]
        if not isinstance(xr.get("metadata"), dict) or not checker.admitted(xr):
            return  # no annotations to opt out of Grove with, or an XR the API server would not store
        try:
            rsp = call(stub, request(xr, operator_config))
        except grpc.RpcError as err:
            raise AssertionError(f"gRPC error {err.code()}: {err.details()}") from None
        outcome = checker.check(rsp)
        stats[outcome] += 1
        if outcome == "rendered":
            assert "podcliqueset" not in rsp.desired.resources
            stats["dcds"] += sum(1 for n in rsp.desired.resources if n.startswith("component-"))

    property_()
    print(f"\nrobustness without Grove: {dict(sorted(stats.items()))}")
    assert stats["rendered"] >= 20 and stats["fatal"] >= 5, stats

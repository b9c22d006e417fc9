"""Upstream's golden controller scenarios (``../shared/upstream/golden``), rendered by us and matched.

Each scenario's ``input.yaml`` is rendered in-process as ``function-dynamo render --nested`` does (the claim
admitted, its XR through the Composition's pipeline, then every nested composite it composes), in namespace
``clusterenv-golden`` (upstream's objects carry ``clusterenv-*`` namespaces). Every expected object of
``output.yaml`` is then looked up among ours by (kind, name) and compared with ``golden_match.match``.

- A DynamoComponentDeployment is, here, the cluster-scoped XR ``XDynamoComponentDeployment`` the DGD composes;
  it is compared as the DCD it stands for: its claim kind, the name and namespace of its
  ``dynamo.fn.crossplane.io/claim-*`` annotations, its spec without Crossplane's machinery fields, as the
  API server stores it (admitted with its XRD's CRD).
- Upstream reads its objects back from a real API server; ours are desired state, so
  ``with_api_server_defaults`` adds what the API server would (built-in kinds' defaulting, CRD schema
  defaults), limited to what the expected files show.
- ``$var:<name>`` is any value, the same wherever the name appears in a scenario: values are bound by the
  expected objects that come before in the file, then by this one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml

from fixtures.golden_match import match
from fixtures.profiling_play import (
    as_observed,
    composed,
    final_config,
    job_succeeded,
    output_configmap,
    reconcile,
    success_output,
    with_status,
)
from fixtures.tooling import in_ci, shared_dir
from functions.api.normalise import COMPOSED_NAME_ANNOTATION, COMPOSED_NAMESPACE_ANNOTATION, CROSSPLANE_SPEC_KEYS
from functions.kinds.graph import origin
from functions.tooling.manifests import (
    CLAIM_KINDS,
    CLAIM_ONLY_SPEC_FIELDS,
    ManifestError,
    find_composition,
    load_documents,
)
from functions.tooling.pipeline import RenderError, composes_kind, render, render_nested
from functions.tooling.render import Refused, admitted, admitted_xr

REPO = Path(__file__).resolve().parents[1]
GOLDEN = ("upstream", "golden")
SCENARIOS = ("dgd/grove", "dgd/components", "dcd/deployment", "dcd/lws", "dgdr/grove", "dgdr/lws", "dgdr/deployment")
NAMESPACE = "clusterenv-golden"
MAX_MISMATCH_LINES = 15
OPEN_GAPS = Path(__file__).with_name("golden_open_gaps.yaml")
# The operator version upstream's scenarios run with: their harness passes the version ``git describe`` gives the
# checkout (a 1.4 tag plus commits), not the chart's appVersion an installed operator stamps, so the expected
# origin annotations read ``1\.4\..*``. The scenarios are rendered as an operator of that version would.
HARNESS_OPERATOR_VERSION = "1.4.0"
XR_TO_CLAIM_KIND = {xr_kind: claim_kind for claim_kind, (xr_kind, _) in CLAIM_KINDS.items()}

Obj = dict[str, Any]


def golden_root() -> Path:
    """``../shared/upstream/golden``; the test skips (fails under CI) when it is absent."""
    path = shared_dir().joinpath(*GOLDEN)
    if not path.is_dir():
        reason = f"../shared/upstream/golden not found ({path}): upstream's golden scenarios are shared data"
        if in_ci():
            pytest.fail(f"{reason} (CI=true: missing prerequisites fail instead of skipping)", pytrace=False)
        pytest.skip(reason)
    return path


# --- what the API server adds ----------------------------------------------------------------------------------


def _default(obj: Obj, key: str, value: Any) -> None:
    if key not in obj:
        obj[key] = copy.deepcopy(value)


def _probe_defaults(probe: Obj) -> None:
    _default(probe, "timeoutSeconds", 1)  # SetDefaults_Probe
    _default(probe, "periodSeconds", 10)  # SetDefaults_Probe
    _default(probe, "successThreshold", 1)  # SetDefaults_Probe
    _default(probe, "failureThreshold", 3)  # SetDefaults_Probe
    if isinstance(probe.get("httpGet"), dict):
        _default(probe["httpGet"], "scheme", "HTTP")  # SetDefaults_HTTPGetAction


def _image_pull_policy(image: str) -> str:
    """SetDefaults_Container: Always for a ``:latest`` or untagged image, else IfNotPresent."""
    last = image.rsplit("/", 1)[-1]
    if "@" in last:
        return "IfNotPresent"
    return "Always" if ":" not in last or last.endswith(":latest") else "IfNotPresent"


def _builtin_container_defaults(container: Obj) -> None:
    _default(container, "imagePullPolicy", _image_pull_policy(container.get("image", "")))  # SetDefaults_Container
    _default(container, "terminationMessagePath", "/dev/termination-log")  # SetDefaults_Container
    _default(container, "terminationMessagePolicy", "File")  # SetDefaults_Container
    _default(container, "resources", {})  # a non-pointer struct: always serialised, {} when empty
    for port in container.get("ports") or []:
        _default(port, "protocol", "TCP")  # SetDefaults_ContainerPort
    for env in container.get("env") or []:
        field_ref = (env.get("valueFrom") or {}).get("fieldRef")
        if isinstance(field_ref, dict):
            _default(field_ref, "apiVersion", "v1")  # SetDefaults_ObjectFieldSelector
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if isinstance(container.get(probe), dict):
            _probe_defaults(container[probe])


def _builtin_pod_spec_defaults(spec: Obj) -> None:
    _default(spec, "dnsPolicy", "ClusterFirst")  # SetDefaults_PodSpec
    _default(spec, "restartPolicy", "Always")  # SetDefaults_PodSpec
    _default(spec, "schedulerName", "default-scheduler")  # SetDefaults_PodSpec
    _default(spec, "securityContext", {})  # SetDefaults_PodSpec
    _default(spec, "terminationGracePeriodSeconds", 30)  # SetDefaults_PodSpec
    if "serviceAccountName" in spec:
        _default(spec, "serviceAccount", spec["serviceAccountName"])  # v1 conversion fills the deprecated alias
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        _builtin_container_defaults(container)


def _deployment_defaults(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    _default(spec, "replicas", 1)  # SetDefaults_Deployment
    _default(spec, "revisionHistoryLimit", 10)  # SetDefaults_Deployment
    _default(spec, "progressDeadlineSeconds", 600)  # SetDefaults_Deployment
    strategy = spec.setdefault("strategy", {})
    _default(strategy, "type", "RollingUpdate")  # SetDefaults_Deployment
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        _default(rolling, "maxSurge", "25%")  # SetDefaults_Deployment
        _default(rolling, "maxUnavailable", "25%")  # SetDefaults_Deployment
    _builtin_pod_spec_defaults(spec.setdefault("template", {}).setdefault("spec", {}))


def _crd_container_defaults(pod_spec: Obj) -> None:
    for container in pod_spec.get("containers") or []:
        for port in container.get("ports") or []:
            _default(port, "protocol", "TCP")  # CRD schema: ports[].protocol default TCP


def _podcliqueset_defaults(obj: Obj) -> None:
    template = obj.setdefault("spec", {}).setdefault("template", {})
    _default(template, "cliqueStartupType", "CliqueStartupTypeAnyOrder")  # grove CRD schema default
    if isinstance(template.get("headlessServiceConfig"), dict):
        _default(template["headlessServiceConfig"], "publishNotReadyAddresses", True)  # grove CRD schema default
    for group in template.get("podCliqueScalingGroups") or []:
        _default(group, "minAvailable", 1)  # grove CRD schema default
        _default(group, "replicas", 1)  # grove CRD schema default
    for clique in template.get("cliques") or []:
        _crd_container_defaults((clique.get("spec") or {}).get("podSpec") or {})


def _leaderworkerset_defaults(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    _default(spec, "replicas", 1)  # LWS CRD schema default
    _default(spec, "startupPolicy", "LeaderCreated")  # LWS CRD schema default
    template = spec.setdefault("leaderWorkerTemplate", {})
    _default(template, "restartPolicy", "RecreateGroupOnPodRestart")  # LWS CRD schema default
    _default(template, "size", 1)  # LWS CRD schema default
    # LWS's own mutating webhook (installed with LWS in every cluster, and in upstream's test environment):
    # it sets these two whether the operator did or not, so a cluster stores them on ours as well.
    _default(spec, "networkConfig", {"subdomainPolicy": "Shared"})
    _default(spec, "rolloutStrategy", {"rollingUpdateConfiguration": {}})
    if isinstance(spec.get("rolloutStrategy"), dict):
        _default(spec["rolloutStrategy"], "type", "RollingUpdate")  # LWS CRD schema default
        rolling = spec["rolloutStrategy"].get("rollingUpdateConfiguration")
        if isinstance(rolling, dict):
            _default(rolling, "maxSurge", 0)  # LWS CRD schema default
            _default(rolling, "maxUnavailable", 1)  # LWS CRD schema default
            _default(rolling, "partition", 0)  # LWS CRD schema default
    for role in ("leaderTemplate", "workerTemplate"):
        _crd_container_defaults((template.get(role) or {}).get("spec") or {})


DEFAULTERS: dict[tuple[str, str], Callable[[Obj], None]] = {
    ("apps/v1", "Deployment"): _deployment_defaults,
    ("grove.io/v1alpha1", "PodCliqueSet"): _podcliqueset_defaults,
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"): _leaderworkerset_defaults,
}


def with_api_server_defaults(obj: Obj) -> Obj:
    """A copy of ``obj`` with the defaults the API server applies on create: the built-in defaulting of
    Deployments (and their pod templates), the CRD schema defaults of PodCliqueSets and LeaderWorkerSets and
    LWS's defaulting webhook; only those the upstream expected files show."""
    out = copy.deepcopy(obj)
    defaulter = DEFAULTERS.get((out.get("apiVersion", ""), out.get("kind", "")))
    if defaulter is not None:
        defaulter(out)
    return out


# --- our objects -----------------------------------------------------------------------------------------------


@dataclass
class Rendered:
    """Every object our render of a scenario would have the API server store (or why there are none)."""

    objects: list[Obj] = field(default_factory=list)
    error: str | None = None


def _admit_composite(xr: Obj) -> Obj:
    return admitted_xr(xr, "", "Strict")


def as_claim(xr: Obj) -> Obj:
    """A nested composite (an XDynamoComponentDeployment a DGD composes) as the claim it stands for."""
    out = copy.deepcopy(xr)
    meta = out.setdefault("metadata", {})
    annotations = meta.get("annotations") or {}
    out["kind"] = XR_TO_CLAIM_KIND.get(out.get("kind", ""), out.get("kind"))
    meta["name"] = annotations.get(COMPOSED_NAME_ANNOTATION, meta.get("name"))
    meta["namespace"] = annotations.get(COMPOSED_NAMESPACE_ANNOTATION, meta.get("namespace"))
    out["spec"] = {k: v for k, v in (out.get("spec") or {}).items() if k not in CROSSPLANE_SPEC_KEYS}
    return out


def stored(obj: Obj, compositions: list[Obj]) -> Obj:
    """What the API server stores for one composed object."""
    if composes_kind(compositions, obj) is not None:
        return as_claim(_admit_composite(obj))
    return with_api_server_defaults(obj)


def scenario_input(scenario: str) -> Obj:
    (claim,) = load_documents(golden_root() / scenario / "input.yaml")
    meta = claim.setdefault("metadata", {})
    meta["namespace"] = meta.get("namespace") or NAMESPACE
    return claim


def profiler_output(scenario: str, claim: Obj) -> str:
    """The ``final_config.yaml`` the (mocker) profiler writes for the scenario: the expected graph as the profiler
    hands it over, with ``overrides.dgd`` merged in and the DGDR's image on the containers (the profiler's part;
    the expected files ``$ignore`` the image), before the operator names it and sets each component's
    ``runtimeVersionOverride`` (the part under test)."""
    (expected,) = [without_directives(o) for o in expected_objects(scenario) if o["kind"] == "DynamoGraphDeployment"]
    override = ((claim.get("spec") or {}).get("overrides") or {}).get("dgd") or {}
    spec = copy.deepcopy(expected["spec"])
    for component in spec.get("components") or []:
        component.pop("runtimeVersionOverride", None)
        for container in ((component.get("podTemplate") or {}).get("spec") or {}).get("containers") or []:
            container.setdefault("image", claim["spec"]["image"])
    metadata: Obj = {"name": "vllm-disagg"}
    if (override.get("metadata") or {}).get("annotations"):
        metadata["annotations"] = dict(override["metadata"]["annotations"])
    return final_config(
        {"apiVersion": expected["apiVersion"], "kind": expected["kind"], "metadata": metadata, "spec": spec}
    )


def without_directives(node: Any) -> Any:
    """``node`` without the matcher's directive keys (``$strict``) and directive values (``$ignore``)."""
    if isinstance(node, dict):
        return {
            k: without_directives(v)
            for k, v in node.items()
            if not str(k).startswith("$") and not (isinstance(v, str) and v.startswith("$"))
        }
    if isinstance(node, list):
        return [without_directives(v) for v in node]
    return node


def request_to_graph(scenario: str, claim: Obj) -> tuple[list[Obj], Obj]:
    """A DGDR through profiling: the first reconcile composes the Job; the Job completes and its sidecar writes
    the output ConfigMap; the next reconcile composes the generated DynamoGraphDeployment claim."""
    xr = admitted_xr(claim, claim["metadata"]["namespace"], "Strict")
    first = reconcile(xr, [], [])
    job = as_observed(composed(first, "Job"), job_succeeded())
    output = output_configmap(claim["metadata"]["name"], claim["metadata"]["namespace"],
                              success_output(profiler_output(scenario, claim)))  # fmt: skip
    second = reconcile(with_status(xr, first), [job], [output])
    return second.composed, composed(second, "DynamoGraphDeployment")


def stored_claim(claim: Obj) -> Obj:
    """A claim as the API server stores it (its XRD's CRD defaults applied), without Crossplane's spec fields."""
    out = admitted(claim, "Strict")
    out["spec"] = {k: v for k, v in out["spec"].items() if k not in CROSSPLANE_SPEC_KEYS | CLAIM_ONLY_SPEC_FIELDS}
    return out


@cache
def rendered(scenario: str) -> Rendered:
    """``function-dynamo render --nested`` of the scenario's input, in-process, as the API server stores it; for a
    DGDR, the objects of its profiling run and then those of the graph it deploys."""
    with mock.patch.object(origin, "RENDERED_OPERATOR_VERSION", HARNESS_OPERATOR_VERSION):
        return _rendered(scenario)


def _rendered(scenario: str) -> Rendered:
    claim = scenario_input(scenario)
    compositions = load_documents(REPO / "compositions")
    before: list[Obj] = []
    try:
        if claim["kind"] == "DynamoGraphDeploymentRequest":
            request_objects, claim = request_to_graph(scenario, claim)
            before = [
                stored_claim(claim),
                *(o for o in request_objects if o is not claim and o["kind"] != claim["kind"]),
            ]
        xr = admitted_xr(claim, claim["metadata"]["namespace"], "Strict")
        out = render(xr, find_composition(xr, compositions), [], [])
        children = render_nested(out, compositions, [], _admit_composite)
    except (ManifestError, RenderError, Refused) as err:
        return Rendered(error=f"{type(err).__name__}: {err}")
    composed_objects = [*out.composed, *(o for child in children for o in child.composed)]
    return Rendered(objects=[*before, *(stored(o, compositions) for o in composed_objects)])


def _of_kind(scenario: str, kind: str) -> list[Obj]:
    """Our objects of ``kind`` in the scenario's namespace (none when the render failed)."""
    namespace = scenario_input(scenario)["metadata"]["namespace"]
    objects = rendered(scenario).objects
    return [o for o in objects if o.get("kind") == kind and o["metadata"].get("namespace") == namespace]


# --- the expected objects --------------------------------------------------------------------------------------


def expected_objects(scenario: str) -> list[Obj]:
    return load_documents(golden_root() / scenario / "output.yaml")


def name_of(expected: Obj) -> Any:
    return (expected.get("metadata") or {}).get("name")


def named(expected_name: Any, candidates: list[Obj]) -> list[Obj]:
    """The candidates whose name matches the expected name (which may be a ``$glob:``/``$pattern:``)."""
    return [o for o in candidates if not match(expected_name, o["metadata"].get("name"), {})]


def variables_before(scenario: str, index: int) -> dict[str, Any]:
    """``$var:`` values bound by the scenario's expected objects before ``index`` (those we have)."""
    variables: dict[str, Any] = {}
    for expected in expected_objects(scenario)[:index]:
        found = named(name_of(expected), _of_kind(scenario, expected["kind"]))
        if len(found) == 1:
            match(expected, found[0], variables)
    return variables


def scenario_id(scenario: str) -> str:
    return scenario.replace("/", "-")


def object_id(expected: Obj) -> str:
    name = str(name_of(expected))
    for prefix in ("$glob:", "$pattern:"):
        name = name.removeprefix(prefix)
    return f"{expected.get('kind')}/{name}"


def _object_cases() -> list[Any]:
    root = shared_dir().joinpath(*GOLDEN)
    cases = []
    for scenario in SCENARIOS:
        output = root / scenario / "output.yaml"
        if not output.is_file():
            cases.append(pytest.param(scenario, -1, id=f"{scenario_id(scenario)}/-"))
            continue
        for index, expected in enumerate(load_documents(output)):
            cases.append(pytest.param(scenario, index, id=f"{scenario_id(scenario)}/{object_id(expected)}"))
    return cases


def open_gaps() -> dict[str, list[str]]:
    """``golden_open_gaps.yaml``: per case, the differences from upstream HEAD not closed yet."""
    return yaml.safe_load(OPEN_GAPS.read_text()) or {}


def object_problems(scenario: str, index: int) -> list[str]:
    """Where our counterpart of the scenario's expected object ``index`` differs from it."""
    error = rendered(scenario).error
    if error is not None:
        return [f"our render failed: {error}"]
    expected = expected_objects(scenario)[index]
    candidates = _of_kind(scenario, expected["kind"])
    found = named(name_of(expected), candidates)
    if len(found) != 1:
        names = sorted(o["metadata"].get("name") for o in candidates)
        return [f"{len(found)} {expected['kind']} named {name_of(expected)!r} among ours: {names}"]
    return match(expected, found[0], variables_before(scenario, index))


def kind_set_problems(scenario: str) -> list[str]:
    """Per expected kind, our objects that pair with no expected name, and expected names we lack."""
    error = rendered(scenario).error
    if error is not None:
        return [f"our render failed: {error}"]
    problems: list[str] = []
    by_kind: dict[str, list[Any]] = {}
    for expected in expected_objects(scenario):
        by_kind.setdefault(expected["kind"], []).append(name_of(expected))
    for kind, names in by_kind.items():
        unclaimed = _of_kind(scenario, kind)
        for name in names:
            found = named(name, unclaimed)
            if len(found) != 1:
                problems.append(f"{kind} {name!r}: {len(found)} of ours match")
            unclaimed = [o for o in unclaimed if o not in found[:1]]
        problems += [f"{kind} {o['metadata'].get('name')!r}: not expected" for o in unclaimed]
    return problems


def assert_only_open_gaps(case: str, problems: list[str]) -> None:
    """Every difference is a listed open gap, and every listed gap is still a difference."""
    gaps = open_gaps().get(case, [])
    new = [p for p in problems if p not in gaps]
    closed = [g for g in gaps if g not in problems]
    message = []
    if new:
        message += [f"{len(new)} difference(s) from upstream not in {OPEN_GAPS.name}:", *new[:MAX_MISMATCH_LINES]]
    if closed:
        message += [f"{len(closed)} gap(s) closed: remove them from {OPEN_GAPS.name}:", *closed]
    if message:
        pytest.fail("\n".join(message), pytrace=False)


@pytest.mark.parametrize(("scenario", "index"), _object_cases())
def test_expected_object_matches_ours(scenario: str, index: int) -> None:
    golden_root()
    expected = expected_objects(scenario)[index]
    assert_only_open_gaps(f"{scenario_id(scenario)}/{object_id(expected)}", object_problems(scenario, index))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=scenario_id)
def test_each_expected_kind_holds_exactly_the_expected_objects(scenario: str) -> None:
    golden_root()
    assert_only_open_gaps(f"{scenario_id(scenario)}/kinds", kind_set_problems(scenario))

"""The status step through the in-process pipeline on tests/scenarios/status/: Ready and pending DGDs."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from fixtures.corpus import example_claim, load_claim, status_example_xr
from fixtures.rendering import check_resource
from fixtures.tooling import REPO, require_crds
from functions.contract import READY_TTL_SECONDS, StepRequest
from functions.fn import run, struct_to_dict
from functions.kinds.component.component_step import component_deployment
from functions.tooling.manifests import claim_to_xr, find_composition, load_documents
from functions.tooling.pipeline import RenderOutput, render
from functions.tooling.validation import derive_crds, load_crds, validate_object

STATUS_EXAMPLES = REPO / "tests" / "scenarios" / "status"
EXAMPLES = sorted(p for p in STATUS_EXAMPLES.iterdir() if p.is_dir())
READY = [p for p in EXAMPLES if p.name.endswith("-ready")]
GROVE_READY = [p for p in READY if "no-grove" not in p.name]  # the component pathway has no topology condition
PENDING = [p for p in EXAMPLES if p.name.endswith("-pending")]


def claim_path(example: Path) -> Path:
    """tests/scenarios/status/<claim>-<state>/ belongs to examples/<claim>.yaml."""
    return example_claim(example.name.rsplit("-", 1)[0])


@dataclass
class Recorder:
    """A pipeline runner that keeps every GraphStatus request and response."""

    requests: list[fnv1.RunFunctionRequest] = field(default_factory=list)
    responses: list[fnv1.RunFunctionResponse] = field(default_factory=list)

    def __call__(self, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        rsp = run(req)
        if req.input["kind"] == "GraphStatus":
            self.requests.append(fnv1.RunFunctionRequest.FromString(req.SerializeToString()))
            self.responses.append(rsp)
        return rsp

    @property
    def last(self) -> fnv1.RunFunctionResponse:
        return self.responses[-1]

    def readiness(self) -> dict[str, bool]:
        return {n: r.ready == fnv1.READY_TRUE for n, r in self.last.desired.resources.items()}


def required_of(example: Path) -> list[dict[str, Any]]:
    """The example's required resources; the component pathway's examples have none (no required.yaml)."""
    path = example / "required.yaml"
    return load_documents(path) if path.exists() else []


def render_example(
    example: Path,
    claim: dict[str, Any] | None = None,
    observed: list[dict[str, Any]] | None = None,
    required: list[dict[str, Any]] | None = None,
    xr_patch: dict[str, Any] | None = None,
) -> tuple[RenderOutput, Recorder]:
    xr = claim_to_xr(claim) if claim is not None else status_example_xr(example)
    xr.update(xr_patch or {})
    recorder = Recorder()
    out = render(
        xr,
        find_composition(xr, load_documents(REPO / "compositions")),
        load_documents(example / "observed.yaml") if observed is None else observed,
        required_of(example) if required is None else required,
        runner=recorder,
    )
    return out, recorder


def conditions(out: RenderOutput) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in out.composite["status"]["conditions"]}


def test_there_are_ready_and_pending_examples_for_both_shapes() -> None:
    assert {p.name for p in EXAMPLES} == {
        "sglang-multinode-ready",
        "sglang-multinode-pending",
        "vllm-agg-ready",
        "vllm-agg-pending",
        "vllm-disagg-restarting",
        "vllm-disagg-no-grove-ready",
        "vllm-disagg-no-grove-rolling",
        "vllm-agg-lagging",
        "vllm-agg-stalled",
        "vllm-agg-idle",
        "vllm-disagg-no-grove-lagging",
        "vllm-disagg-no-grove-stalled",
    }
    assert {load_claim(claim_path(p))["apiVersion"] for p in EXAMPLES} == {"nvidia.com/v1alpha1", "nvidia.com/v1beta1"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_observed_resources_are_what_the_render_step_composes(example: Path) -> None:
    """Every desired composed resource has an observed twin under the same name (else: regenerate the example)."""
    # Rendered against the example's own observed state: a rolling update composes the old DCDs it observes.
    out, _ = render_example(example, required=[])
    observed = load_documents(example / "observed.yaml")

    def key(obj: dict[str, Any]) -> tuple[str, str, str, str]:
        meta = obj["metadata"]
        return (
            meta["annotations"]["crossplane.io/composition-resource-name"],
            obj["kind"],
            meta["name"],
            meta.get("namespace", ""),  # nested composites are cluster-scoped
        )

    assert sorted(map(key, observed)) == sorted(map(key, out.composed))


@pytest.mark.parametrize("example", READY, ids=[p.name for p in READY])
def test_ready_example_renders_a_ready_dgd(example: Path) -> None:
    out, recorder = render_example(example)
    status = out.composite["status"]
    assert status["state"] == "successful"
    conds = conditions(out)
    assert conds["DynamoGraphReady"] == {
        "lastTransitionTime": "2024-01-01T00:00:00Z",
        "message": "All resources are ready",
        "reason": "all_resources_are_ready",
        "status": "True",
        "type": "DynamoGraphReady",
    }
    assert (conds["Ready"]["status"], conds["Ready"]["reason"]) == ("True", "Available")
    assert recorder.readiness() and all(recorder.readiness().values())
    assert recorder.last.desired.composite.ready == fnv1.READY_TRUE
    assert recorder.last.meta.ttl.seconds == READY_TTL_SECONDS  # a ready graph: the Composition's readyTTL
    assert "TopologyLevelsAvailable" not in conds


@pytest.mark.parametrize("example", PENDING, ids=[p.name for p in PENDING])
def test_pending_example_renders_a_pending_dgd(example: Path) -> None:
    out, recorder = render_example(example)
    assert out.composite["status"]["state"] == "pending"
    conds = conditions(out)
    assert conds["DynamoGraphReady"]["status"] == "False"
    assert conds["DynamoGraphReady"]["reason"] == "some_resources_are_not_ready"
    assert conds["Ready"] == {
        "lastTransitionTime": "2024-01-01T00:00:00Z",
        "message": "Unready resources: podcliqueset",
        "reason": "Creating",
        "status": "False",
        "type": "Ready",
    }
    readiness = recorder.readiness()
    assert readiness.pop("podcliqueset") is False
    assert readiness and all(readiness.values())  # everything else exists, and that is all it takes
    assert recorder.last.desired.composite.ready == fnv1.READY_UNSPECIFIED
    assert recorder.last.meta.ttl.seconds == 15


def test_sglang_multinode_services_map() -> None:
    ready, _ = render_example(STATUS_EXAMPLES / "sglang-multinode-ready")
    assert ready.composite["status"]["services"] == {
        "Frontend": {
            "componentKind": "PodClique",
            "componentName": "sglang-multinode-0-frontend",
            "componentNames": ["sglang-multinode-0-frontend"],
            "readyReplicas": 1,
            "replicas": 1,
            "updatedReplicas": 1,
        },
        "SglangWorker": {
            "availableReplicas": 1,
            "componentKind": "PodCliqueScalingGroup",
            "componentName": "sglang-multinode-0-sglangworker",
            "componentNames": ["sglang-multinode-0-sglangworker"],
            "replicas": 1,
            "updatedReplicas": 1,
        },
    }
    assert "components" not in ready.composite["status"]
    pending, _ = render_example(STATUS_EXAMPLES / "sglang-multinode-pending")
    assert pending.composite["status"]["services"]["SglangWorker"]["availableReplicas"] == 0
    assert conditions(pending)["DynamoGraphReady"]["message"] == (
        "Resources not ready: sglang-multinode: pcsg/sglang-multinode-0-sglangworker: desired=1, available=0"
    )


def test_vllm_agg_components_map() -> None:
    pending, _ = render_example(STATUS_EXAMPLES / "vllm-agg-pending")
    assert pending.composite["status"]["components"] == {
        "Frontend": {
            "componentKind": "PodClique",
            "componentNames": ["vllm-agg-0-frontend"],
            "readyReplicas": 1,
            "replicas": 1,
            "updatedReplicas": 1,
        },
        "VllmWorker": {
            "componentKind": "PodClique",
            "componentNames": ["vllm-agg-0-vllmworker"],
            "readyReplicas": 1,
            "replicas": 2,
            "updatedReplicas": 2,
        },
    }
    assert "services" not in pending.composite["status"]
    assert conditions(pending)["DynamoGraphReady"]["message"] == (
        "Resources not ready: vllm-agg: podclique/vllm-agg-0-vllmworker: desired=2, ready=1"
    )
    ready, _ = render_example(STATUS_EXAMPLES / "vllm-agg-ready")
    assert ready.composite["status"]["components"]["VllmWorker"]["readyReplicas"] == 2


def restart_at(out: RenderOutput) -> dict[str, str]:
    pcs = next(o for o in out.composed if o["kind"] == "PodCliqueSet")
    return {c["name"]: c["annotations"]["nvidia.com/restartAt"] for c in pcs["spec"]["template"]["cliques"]}


def test_restart_in_progress_example() -> None:
    """Sequential restart-2: frontend done, the decode worker rolling, the prefill worker keeps restart-1."""
    example = STATUS_EXAMPLES / "vllm-disagg-restarting"
    out, recorder = render_example(example)
    status = out.composite["status"]
    assert status["restart"] == {"inProgress": ["VllmDecodeWorker"], "observedID": "restart-2", "phase": "Restarting"}
    assert status["state"] == "pending"
    assert restart_at(out) == {
        "frontend": "restart-2",
        "vllmdecodeworker": "restart-2",
        "vllmprefillworker": "restart-1",  # read back from the observed PodCliqueSet: no extra rollout
    }
    assert recorder.last.meta.ttl.seconds == 15

    required = load_documents(example / "required.yaml")
    decode = next(o for o in required if o["metadata"]["name"] == "vllm-disagg-0-vllmdecodeworker")
    decode["status"]["readyReplicas"] = 1
    out, _ = render_example(example, required=required)
    assert out.composite["status"]["restart"] == {
        "inProgress": ["VllmPrefillWorker"],
        "observedID": "restart-2",
        "phase": "Restarting",
    }
    assert set(restart_at(out).values()) == {"restart-2"}  # the prefill worker's turn, in the same reconcile


def test_before_anything_exists_every_resource_is_not_found() -> None:
    out, recorder = render_example(STATUS_EXAMPLES / "vllm-agg-ready", observed=[], required=[])
    assert out.composite["status"]["state"] == "pending"
    names = sorted(o["metadata"]["name"] for o in out.composed)
    assert conditions(out)["DynamoGraphReady"]["message"] == "Resources not ready: " + "; ".join(
        f"{n}: resource not found" for n in names
    )
    # Crossplane is told only the PodCliqueSet is not ready: the rest is ready once applied, and the
    # PodCliqueSet keeps the XR unready (one "not yet ready" event, not one per object)
    assert [n for n, ready in recorder.readiness().items() if not ready] == ["podcliqueset"]
    components = out.composite["status"]["components"]
    assert components["VllmWorker"] == {
        "componentKind": "PodClique",
        "componentNames": ["vllm-agg-0-vllmworker"],
        "replicas": 0,
        "updatedReplicas": 0,
    }


def test_on_the_component_pathway_the_dcds_are_what_crossplane_is_told_waits() -> None:
    out, recorder = render_example(STATUS_EXAMPLES / "vllm-disagg-no-grove-ready", observed=[], required=[])
    assert out.composite["status"]["state"] == "pending"
    kinds = {n: r.resource["kind"] for n, r in recorder.last.desired.resources.items()}
    unready = sorted(n for n, ready in recorder.readiness().items() if not ready)
    assert unready and all(kinds[n] == "XDynamoComponentDeployment" for n in unready), (unready, kinds)
    assert sorted(n for n, k in kinds.items() if k == "XDynamoComponentDeployment") == unready


def test_the_podcliqueset_waits_for_its_cliques_not_only_for_itself() -> None:
    """Observed PCS, but Grove has not created the PodCliques yet."""
    out, recorder = render_example(STATUS_EXAMPLES / "vllm-agg-ready", required=[])
    assert conditions(out)["DynamoGraphReady"]["message"] == (
        "Resources not ready: vllm-agg: podclique/vllm-agg-0-frontend: resource not found; "
        "podclique/vllm-agg-0-vllmworker: resource not found"
    )
    assert recorder.readiness()["podcliqueset"] is False
    assert recorder.readiness()["service-frontend"] is True


def test_a_composed_resource_not_observed_yet_is_not_ready() -> None:
    example = STATUS_EXAMPLES / "vllm-agg-ready"
    observed = [o for o in load_documents(example / "observed.yaml") if o["kind"] != "Service"]
    out, recorder = render_example(example, observed=observed)
    services = sorted(n for n, r in recorder.last.desired.resources.items() if r.resource["kind"] == "Service")
    assert services
    assert {n: recorder.readiness()[n] for n in services} == dict.fromkeys(services, False)
    assert recorder.readiness()["podcliqueset"] is True
    assert out.composite["status"]["state"] == "pending"
    names = sorted(o["metadata"]["name"] for o in out.composed if o["kind"] == "Service")
    assert conditions(out)["DynamoGraphReady"]["message"] == "Resources not ready: " + "; ".join(
        f"{n}: resource not found" for n in names
    )


def test_requirements_settle_after_one_round_and_bring_the_grove_objects() -> None:
    example = STATUS_EXAMPLES / "sglang-multinode-ready"
    _, recorder = render_example(example)
    assert len(recorder.requests) == 2  # asks, then gets them and asks the same: stable
    first, second = recorder.requests
    assert "grove-podcliques" not in first.required_resources
    got = {
        name: sorted(struct_to_dict(r.resource)["metadata"]["name"] for r in second.required_resources[name].items)
        for name in ("grove-podcliques", "grove-podcliquescalinggroups")
    }
    assert got == {
        "grove-podcliques": [
            "sglang-multinode-0-frontend",
            "sglang-multinode-0-sglangworker-0-sglangworker-ldr",
            "sglang-multinode-0-sglangworker-0-sglangworker-wkr",
        ],
        "grove-podcliquescalinggroups": ["sglang-multinode-0-sglangworker"],
    }
    selector = recorder.last.requirements.resources["grove-podcliques"]
    assert (selector.api_version, selector.kind, selector.namespace) == (
        "grove.io/v1alpha1",
        "PodClique",
        "dynamo-demo",
    )
    assert dict(selector.match_labels.labels) == {"app.kubernetes.io/part-of": "sglang-multinode"}


def test_observed_generation_comes_from_the_xr() -> None:
    example = STATUS_EXAMPLES / "vllm-agg-ready"
    xr = claim_to_xr(load_claim(claim_path(example)))
    out, _ = render_example(example, xr_patch={"metadata": {**xr["metadata"], "generation": 7}})
    assert out.composite["status"]["observedGeneration"] == 7
    plain, _ = render_example(example)
    assert "observedGeneration" not in plain.composite["status"]


def with_topology(claim: dict[str, Any]) -> dict[str, Any]:
    claim = copy.deepcopy(claim)
    if "services" in claim["spec"]:
        claim["spec"]["topologyConstraint"] = {"topologyProfile": "gpu-topology", "packDomain": "rack"}
    else:
        claim["spec"]["topologyConstraint"] = {"clusterTopologyName": "gpu-topology", "packDomain": "rack"}
    return claim


def observed_with_pcs_conditions(example: Path, *conds: dict[str, Any]) -> list[dict[str, Any]]:
    observed = load_documents(example / "observed.yaml")
    for obj in observed:
        if obj["kind"] == "PodCliqueSet":
            obj["status"]["conditions"] = list(conds)
    return observed


@pytest.mark.parametrize("example", GROVE_READY, ids=[p.name for p in GROVE_READY])
def test_topology_condition_follows_the_podcliqueset(example: Path) -> None:
    claim = with_topology(load_claim(claim_path(example)))
    out, recorder = render_example(example, claim=claim)
    topology = conditions(out)["TopologyLevelsAvailable"]
    assert (topology["status"], topology["reason"]) == ("Unknown", "TopologyConditionPending")
    assert list(recorder.last.results) == []

    unavailable = {
        "type": "TopologyLevelsUnavailable",
        "status": "True",
        "reason": "ClusterTopologyLevelsUnavailable",
        "message": "Topology level 'rack' is no longer available",
        "lastTransitionTime": "2026-01-15T10:00:00Z",
    }
    out, recorder = render_example(example, claim=claim, observed=observed_with_pcs_conditions(example, unavailable))
    topology = conditions(out)["TopologyLevelsAvailable"]
    assert (topology["status"], topology["reason"], topology["message"]) == (
        "False",
        "TopologyLevelsUnavailable",
        "Topology level 'rack' is no longer available",
    )
    (warning,) = recorder.last.results
    assert warning.severity == fnv1.SEVERITY_WARNING
    assert warning.message == "Topology constraints no longer enforced: Topology level 'rack' is no longer available"
    # Topology does not gate readiness, as upstream.
    assert out.composite["status"]["state"] == "successful"

    available = {**unavailable, "status": "False", "reason": "AllClusterTopologyLevelsAvailable", "message": ""}
    out, _ = render_example(example, claim=claim, observed=observed_with_pcs_conditions(example, available))
    assert conditions(out)["TopologyLevelsAvailable"]["reason"] == "AllTopologyLevelsAvailable"


def test_no_topology_condition_before_the_podcliqueset_exists() -> None:
    example = STATUS_EXAMPLES / "vllm-agg-ready"
    out, _ = render_example(example, claim=with_topology(load_claim(claim_path(example))), observed=[])
    assert "TopologyLevelsAvailable" not in conditions(out)


@pytest.fixture(scope="module")
def grove_crds() -> dict:
    return load_crds(sorted(require_crds("grove").glob("*.yaml")))


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_objects_are_valid_for_their_kinds(example: Path, grove_crds: dict) -> None:
    docs = load_documents(example / "observed.yaml") + required_of(example)
    kinds = set()
    for obj in docs:
        kinds.add(obj["kind"])
        if obj["apiVersion"].startswith("grove.io/"):
            violations = validate_object(obj, grove_crds[("grove.io", obj["kind"])])
            assert violations == [], f"{obj['kind']}/{obj['metadata']['name']}: " + "\n".join(map(str, violations))
        else:
            check_resource(obj)  # built-in kinds, and the nested DynamoComponentDeployments against their XR CRD
    grove = "no-grove" not in example.name
    assert ({"PodCliqueSet", "PodClique", "Service"} if grove else {"XDynamoComponentDeployment"}) <= kinds


def test_the_example_validity_check_catches_a_bad_podclique(grove_crds: dict) -> None:
    (pclq, *_) = load_documents(STATUS_EXAMPLES / "vllm-agg-ready" / "required.yaml")
    pclq["status"]["readyReplicas"] = "1"
    assert validate_object(pclq, grove_crds[("grove.io", "PodClique")]) != []


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_rendered_xr_status_fits_the_xr_schema(example: Path) -> None:
    """Crossplane applies the status to the XR: it must be valid for the XRD's status schema."""
    (xrd,) = load_documents(REPO / "package" / "claims" / "xrds" / "dynamographdeployments.yaml")
    crd = next(c for c in derive_crds(xrd) if c["spec"]["names"]["kind"] == "XDynamoGraphDeployment")
    xr = claim_to_xr(load_claim(claim_path(example)))
    out, _ = render_example(example)
    full = {**xr, "status": out.composite["status"]}
    assert validate_object(full, crd) == []
    full["status"] = {**full["status"], "state": "ready"}
    assert validate_object(full, crd) != []  # the check can fail


def test_component_pathway_rolling_update_example() -> None:
    """Old and new worker DCDs side by side: replicas planned from the new ones' readiness, counts summed."""
    out, recorder = render_example(STATUS_EXAMPLES / "vllm-disagg-no-grove-rolling")
    status = out.composite["status"]
    assert status["state"] == "pending"
    assert status["rollingUpdate"] == {"phase": "InProgress"}
    assert conditions(out)["DynamoGraphReady"]["reason"] == "rolling_update_in_progress"
    decode = status["services"]["VllmDecodeWorker"]
    new, old = decode["componentNames"]
    assert decode["componentName"] == new
    assert (decode["replicas"], decode["readyReplicas"], decode["updatedReplicas"]) == (3, 3, 1)
    replicas = {o["metadata"]["annotations"]["dynamo.fn.crossplane.io/claim-name"]: o["spec"]["replicas"]
                for o in out.composed if o["kind"] == "XDynamoComponentDeployment"}  # fmt: skip
    # decode: D=2, maxSurge 1, newReady 1 -> old keeps 2-1-0 = 1, new gets min(2, 2+1-1) = 2
    assert (replicas[new], replicas[old]) == (2, 1)
    assert recorder.last.meta.ttl.seconds == 15


# Honest readiness (docs/kinds/dgd.md): (scenario, DynamoGraphReady message, Progressing (status, reason, message)).
ROLLOUT_SCENARIOS = [
    (
        "vllm-agg-lagging",
        "Resources not ready: vllm-agg: podcliqueset: replicas=1, updatedReplicas=0; "
        "podclique/vllm-agg-0-vllmworker: desired=2, ready=1",
        ("True", "RolloutInProgress", "Updated replicas lag desired: PodCliqueSet vllm-agg: replicas=1, "
         "updatedReplicas=0; VllmWorker: desired=2, updated=1"),
    ),
    (
        "vllm-agg-stalled",
        "Resources not ready: vllm-agg: podcliqueset: replicas=1, updatedReplicas=0; "
        "podclique/vllm-agg-0-vllmworker: desired=2, updated=1; rollout stalled: update started at "
        "2026-01-15T10:02:30Z not done 750s later (deadline 600s)",
        ("False", "ProgressDeadlineExceeded", "Rollout stalled: VllmWorker: desired=2, updated=1; update started "
         "at 2026-01-15T10:02:30Z not done 750s later (deadline 600s)"),
    ),
    (
        "vllm-agg-idle",
        "Resources not ready: vllm-agg: podclique/vllm-agg-0-vllmworker: desired=2 in the PodCliqueSet, "
        "PodClique wants 0",
        ("True", "RolloutInProgress", "Updated replicas lag desired: VllmWorker: desired=2 in the PodCliqueSet, "
         "PodClique wants 0"),
    ),
    (
        "vllm-disagg-no-grove-lagging",
        "Resources not ready: vllm-disagg-ng-vllmdecodeworker-b4306356: desired=2, updated=1",
        ("True", "RolloutInProgress", "Updated replicas lag desired: VllmDecodeWorker: desired=2, updated=1"),
    ),
    (
        "vllm-disagg-no-grove-stalled",
        "Resources not ready: vllm-disagg-ng-vllmdecodeworker-b4306356: desired=2, updated=1, available=2; "
        'rollout stalled: ReplicaSet "vllm-disagg-ng-vllmdecodeworker-b4306356-cfbadad9ba" has timed out '
        "progressing.",
        ("False", "ProgressDeadlineExceeded", "Rollout stalled: VllmDecodeWorker: desired=2, updated=1, "
         'available=2; ReplicaSet "vllm-disagg-ng-vllmdecodeworker-b4306356-cfbadad9ba" has timed out progressing.'),
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "ready_message", "progressing"), ROLLOUT_SCENARIOS, ids=[s[0] for s in ROLLOUT_SCENARIOS]
)
def test_a_lagging_stalled_or_idle_graph_is_never_ready(
    name: str, ready_message: str, progressing: tuple[str, str, str]
) -> None:
    out, recorder = render_example(STATUS_EXAMPLES / name)
    assert out.composite["status"]["state"] == "pending"
    conds = conditions(out)
    assert (conds["DynamoGraphReady"]["status"], conds["DynamoGraphReady"]["message"]) == ("False", ready_message)
    assert conds["Ready"]["status"] == "False"
    got = conds["Progressing"]
    assert (got["status"], got["reason"], got["message"]) == progressing
    assert recorder.last.desired.composite.ready == fnv1.READY_UNSPECIFIED
    assert recorder.last.meta.ttl.seconds == 15
    # the same input, the same verdict: the stall clock is the observed state's, not the wall clock
    again, _ = render_example(STATUS_EXAMPLES / name)
    assert again.composite["status"] == out.composite["status"]


def test_every_other_scenario_reports_its_rollout() -> None:
    progressing = {p.name: conditions(render_example(p)[0])["Progressing"]["reason"] for p in EXAMPLES}
    assert {n: r for n, r in progressing.items() if n not in {s[0] for s in ROLLOUT_SCENARIOS}} == {
        "sglang-multinode-ready": "RolloutComplete",
        "sglang-multinode-pending": "RolloutComplete",  # not available yet, but nothing lags
        "vllm-agg-ready": "RolloutComplete",
        "vllm-agg-pending": "RolloutComplete",
        "vllm-disagg-restarting": "RolloutInProgress",
        "vllm-disagg-no-grove-ready": "RolloutComplete",
        "vllm-disagg-no-grove-rolling": "RolloutInProgress",
    }


def test_the_stall_needs_the_deadline_to_pass_in_the_observed_state() -> None:
    """The stalled scenario one second short of the deadline is lagging, not stalled."""
    example = STATUS_EXAMPLES / "vllm-agg-stalled"
    required = load_documents(example / "required.yaml")
    worker = next(o for o in required if o["metadata"]["name"] == "vllm-agg-0-vllmworker")
    for cond in worker["status"]["conditions"]:
        if cond["lastTransitionTime"] == "2026-01-15T10:15:00Z":
            cond["lastTransitionTime"] = "2026-01-15T10:12:30Z"  # 600 s after the update started
    out, _ = render_example(example, required=required)
    assert conditions(out)["Progressing"]["reason"] == "RolloutInProgress"


@pytest.mark.parametrize("name", ["vllm-disagg-no-grove-lagging", "vllm-disagg-no-grove-stalled"])
def test_component_scenario_dcd_statuses_are_what_the_dcd_step_derives(name: str) -> None:
    """deployments.yaml (played by the real-cluster test) and the DCD statuses in observed.yaml agree."""
    example = STATUS_EXAMPLES / name
    played = {
        d["metadata"]["labels"]["nvidia.com/dynamo-component"]: d for d in load_documents(example / "deployments.yaml")
    }
    dcds = [o for o in load_documents(example / "observed.yaml") if o["kind"] == "XDynamoComponentDeployment"]
    assert sorted(played) == sorted(d["metadata"]["labels"]["nvidia.com/dynamo-component"] for d in dcds)
    for dcd in dcds:
        xr = {k: v for k, v in dcd.items() if k != "status"}
        deployment = component_deployment(StepRequest(input={}, observed_composite=xr)).desired_resources["deployment"]
        observed = {
            **copy.deepcopy(deployment.resource),
            "status": played[dcd["metadata"]["labels"]["nvidia.com/dynamo-component"]]["status"],
        }
        observed["metadata"]["generation"] = 1
        rsp = component_deployment(
            StepRequest(input={}, observed_composite=xr, observed_resources={"deployment": observed})
        )
        assert {k: v for k, v in dcd["status"].items() if k != "conditions"} == rsp.composite_status
        assert [(c["type"], c["status"], c["reason"], c["message"]) for c in dcd["status"]["conditions"]] == [
            (c.type, c.status, c.reason, c.message) for c in rsp.conditions
        ]

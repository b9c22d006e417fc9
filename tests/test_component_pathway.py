"""The DGD's component pathway: nested DynamoComponentDeployments, their status, rolling update and restart
(docs/upstream/operator.md §1.1, §1.4, §3.2, §3.4, §3.5)."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.corpus import as_upstream_admits, corpus_dgds, load_claim
from fixtures.rendering import check_resource, existing_pvcs, render_xr, rendered
from fixtures.tooling import REPO, crank_render
from functions.api.normalise import graph_from_xr
from functions.contract import StepRequest, StepResponse
from functions.kinds.graph.component_pathway import WORKER_HASH_LABEL, raw_components, worker_hash
from functions.kinds.graph.graph_render_step import render_graph_deployment
from functions.kinds.graph.graph_status_step import graph_status
from functions.tooling.manifests import claim_to_xr, dump_documents, find_composition, load_documents, namespaced_xr
from functions.tooling.pipeline import RenderError, render

EXAMPLE = REPO / "examples" / "v1alpha1" / "vllm-disagg-no-grove.yaml"
PLATFORM = {
    "apiVersion": "apiextensions.crossplane.io/v1beta1",
    "kind": "EnvironmentConfig",
    "metadata": {"name": "dynamo-platform"},
    "data": {
        "ingress": {"controllerClassName": "nginx", "virtualServiceGateway": "istio-system/gw", "hostSuffix": "x.io"},
        "serviceMesh": {"provider": "istio"},
        "checkpoint": {"enabled": True, "storage": {"pvc": {"pvcName": "snapshot-pvc", "basePath": "/checkpoints"}}},
    },
}
# What a DGD may legitimately end in on this pathway: the Grove-only fields and features upstream's webhook
# rejects without Grove, the LWS render-time checks upstream's DCD controller makes, and a component without an
# image, which upstream's webhook rejects on any pathway.
EXPECTED_FAILURE = re.compile(
    r"allowed only on the Grove pathway|requires the Grove pathway"
    r"|rendered as LeaderWorkerSets need|the main container needs an image"
)
CORPUS = [(i, d) for i, d in corpus_dgds() if d.get("spec")]


def without_grove(doc: dict[str, Any]) -> dict[str, Any]:
    out = yaml.safe_load(yaml.safe_dump(doc))
    out.setdefault("metadata", {}).setdefault("namespace", "corpus")
    out["metadata"].setdefault("annotations", {})["nvidia.com/enable-grove"] = "false"
    return out


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


@pytest.mark.parametrize(("doc_id", "doc"), CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_renders_on_the_component_pathway_to_valid_resources(doc_id: str, doc: dict[str, Any]) -> None:
    claim = without_grove(as_upstream_admits(doc))
    xr = claim_to_xr(claim)
    try:
        objects = render_xr(xr, required=[PLATFORM, *existing_pvcs(claim)])
        nested = [
            leaf
            for dcd in by_kind(objects, "XDynamoComponentDeployment")
            for leaf in render_xr(dcd, required=[PLATFORM])
        ]
    except RenderError as err:
        assert EXPECTED_FAILURE.search(str(err)), str(err)
        return
    components = (claim["spec"].get("services") or {}) or claim["spec"].get("components") or []
    assert len(by_kind(objects, "XDynamoComponentDeployment")) == len(components)
    assert not by_kind(objects, "PodCliqueSet")
    for obj in [*objects, *nested]:
        check_resource(obj)
    workloads = len(by_kind(nested, "Deployment")) + len({o["metadata"]["labels"].get("nvidia.com/dynamo-component")
                                                          for o in by_kind(nested, "LeaderWorkerSet")})  # fmt: skip
    replicas_zero = sum(1 for d in by_kind(objects, "XDynamoComponentDeployment") if d["spec"]["replicas"] == 0)
    assert workloads + replicas_zero >= len(components)


def test_the_example_names_labels_and_specs() -> None:
    objects = rendered(load_claim(EXAMPLE))
    dcds = {
        d["metadata"]["annotations"]["dynamo.fn.crossplane.io/claim-name"]: d
        for d in by_kind(objects, "XDynamoComponentDeployment")
    }
    graph = graph_from_xr(claim_to_xr(load_claim(EXAMPLE)))
    hash8 = worker_hash(graph, raw_components(graph, claim_to_xr(load_claim(EXAMPLE))["spec"]))
    workers = [f"vllm-disagg-ng-vllmdecodeworker-{hash8}", f"vllm-disagg-ng-vllmprefillworker-{hash8}"]
    assert sorted(dcds) == ["vllm-disagg-ng-frontend", *workers]
    decode = dcds[f"vllm-disagg-ng-vllmdecodeworker-{hash8}"]
    assert decode["metadata"]["name"] == f"dynamo-demo.vllm-disagg-ng-vllmdecodeworker-{hash8}"
    assert decode["metadata"]["annotations"]["dynamo.fn.crossplane.io/claim-namespace"] == "dynamo-demo"
    labels = {
        "nvidia.com/dynamo-component": "VllmDecodeWorker",
        "nvidia.com/dynamo-graph-deployment-name": "vllm-disagg-ng",
        "nvidia.com/dynamo-namespace": "dynamo-demo-vllm-disagg-ng",
        WORKER_HASH_LABEL: hash8,
    }
    assert labels.items() <= decode["metadata"]["labels"].items()
    # the v1beta1 shape, as the operator's DCD of a v1alpha1 graph reads at v1beta1
    assert (decode["spec"]["name"], decode["spec"]["type"]) == ("VllmDecodeWorker", "decode")
    assert decode["spec"]["backendFramework"] == "vllm"
    assert not {"serviceName", "dynamoNamespace", "labels", "annotations", "envs"} & set(decode["spec"])
    template = decode["spec"]["podTemplate"]
    assert template["metadata"]["labels"] == {WORKER_HASH_LABEL: hash8}
    assert template["metadata"]["annotations"] == {
        "nvidia.com/deployment-rolling-update-max-surge": "1",  # the service's own annotation
        "nvidia.com/dynamo-operator-origin-version": "1.5.0",
    }
    (main,) = template["spec"]["containers"]
    assert main["env"] == [{"name": "DYN_LOG", "value": "info"}]
    assert main["envFrom"] == [{"secretRef": {"name": "hf-token-secret"}}]
    assert decode["spec"]["replicas"] == 2
    frontend = dcds["vllm-disagg-ng-frontend"]
    assert WORKER_HASH_LABEL not in frontend["metadata"]["labels"]
    # The graph itself keeps what it owns on either pathway; the workloads are the DCDs'.
    kinds = {o["kind"] for o in objects}
    assert {"ServiceAccount", "Role", "RoleBinding"} <= kinds and not kinds & {"Deployment", "PodCliqueSet", "Service"}


IDENTITY = {
    "nvidia.com/dynamo-component": "W",
    "nvidia.com/dynamo-graph-deployment-name": "g",
    "nvidia.com/dynamo-namespace": "ns-g",
}
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"
V1ALPHA1_WORKER = {
    "componentType": "worker",
    "labels": {"from": "service"},
    "extraPodMetadata": {"labels": {"tier": "gold", "nvidia.com/dynamo-component": "mine"}},
    "extraPodSpec": {"mainContainer": {"image": IMAGE}},
}
V1BETA1_WORKER = {
    "name": "W",
    "type": "worker",
    "podTemplate": {
        "metadata": {"labels": {"tier": "gold"}},
        "spec": {"containers": [{"name": "main", "image": IMAGE}]},
    },
}


@pytest.mark.parametrize(
    ("api_version", "spec", "expected"),
    [
        pytest.param(
            "nvidia.com/v1alpha1",
            {"labels": {"team": "llm"}, "services": {"W": V1ALPHA1_WORKER}},
            {"tier": "gold", **IDENTITY},
            id="v1alpha1-extraPodMetadata-labels",
        ),
        pytest.param(
            "nvidia.com/v1beta1",
            {"labels": {"team": "llm"}, "components": [V1BETA1_WORKER]},
            {"tier": "gold", **IDENTITY},
            id="v1beta1-podTemplate-labels",
        ),
        pytest.param(
            "nvidia.com/v1beta1",
            {
                "labels": {"team": "llm"},
                "components": [
                    {**V1BETA1_WORKER, "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}}}
                ],
            },
            IDENTITY,
            id="identity-only",
        ),
    ],
)
def test_a_dcd_carries_its_components_pod_template_labels_not_the_graphs(
    api_version: str, spec: dict[str, Any], expected: dict[str, str]
) -> None:
    """Upstream's ``generateSingleDCD`` labels a DCD with the component's pod-template labels under its identity
    labels (and a worker's hash); the DGD's ``spec.labels`` and a v1alpha1 service's ``labels`` reach the pods
    through the DCD's spec, not its metadata."""
    claim = {
        "apiVersion": api_version,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", "annotations": {"nvidia.com/enable-grove": "false"}},
        "spec": {"backendFramework": "vllm", **spec},
    }
    (dcd,) = by_kind(rendered(claim), "XDynamoComponentDeployment")
    labels = {k: v for k, v in dcd["metadata"]["labels"].items() if not k.startswith("crossplane.io/")}
    assert labels == {**expected, WORKER_HASH_LABEL: labels[WORKER_HASH_LABEL]}
    (deployment,) = by_kind(render_xr(dcd), "Deployment")
    assert deployment["metadata"]["labels"]["team"] == "llm"  # the graph's labels still reach the workload


def test_a_dcd_name_too_long_for_a_composite_is_cut_and_hashed() -> None:
    """Crossplane refuses XR names over 63 characters: a long namespace must not make the DCDs uncreatable
    (a real Crossplane showed it: e2e-vllm-disagg-no-grove.vllm-disagg-ng-vllmdecodeworker-<hash> is 66)."""
    claim = load_claim(EXAMPLE)
    names = {}
    for namespace in ("a-namespace-whose-name-is-rather-long", "a-namespace-whose-name-is-rather-lonG".lower() + "x"):
        claim["metadata"]["namespace"] = namespace
        dcds = by_kind(rendered(claim), "XDynamoComponentDeployment")
        names[namespace] = sorted(d["metadata"]["name"] for d in dcds)
        for dcd in dcds:
            name = dcd["metadata"]["name"]
            full = f"{namespace}.{dcd['metadata']['annotations']['dynamo.fn.crossplane.io/claim-name']}"
            assert len(name) <= 63, name
            assert name == full if len(full) <= 63 else re.fullmatch(r"[a-z0-9.-]{1,54}-[0-9a-f]{8}", name), name
    first, second = names.values()
    assert not set(first) & set(second)  # still unique per namespace
    assert rendered(claim) == rendered(claim)  # and stable


def test_the_worker_hash_follows_pod_relevant_worker_fields_only() -> None:
    xr = claim_to_xr(load_claim(EXAMPLE))

    def hash_of(change) -> str:
        changed = copy.deepcopy(xr)
        change(changed["spec"]["services"])
        graph = graph_from_xr(changed)
        return worker_hash(graph, raw_components(graph, changed["spec"]))

    base = hash_of(lambda s: None)
    assert re.fullmatch(r"[0-9a-f]{8}", base)
    assert hash_of(lambda s: s["VllmDecodeWorker"].update(replicas=7)) == base
    assert hash_of(lambda s: s["VllmDecodeWorker"].update(labels={"team": "a"})) == base
    assert hash_of(lambda s: s["VllmDecodeWorker"].update(replicas=2.0)) == base  # protobuf's doubles
    assert hash_of(lambda s: s["Frontend"].update(envFromSecret="other")) == base  # not a worker
    assert hash_of(lambda s: s["VllmPrefillWorker"]["extraPodSpec"]["mainContainer"].update(image="v2")) != base


@pytest.mark.parametrize("path", [EXAMPLE, REPO / "examples" / "dgd" / "vllm-agg.yaml"], ids=["v1alpha1", "v1beta1"])
def test_nested_dcds_render_the_pods_grove_would(path: Path) -> None:
    """Each component's pod spec is the same whichever pathway renders it (only names differ)."""
    claim = load_claim(path)
    grove_claim = copy.deepcopy(claim)
    grove_claim["metadata"].pop("annotations", None)
    pcs = by_kind(rendered(grove_claim), "PodCliqueSet")[0]
    grove_pods = {c["name"]: c["spec"]["podSpec"] for c in pcs["spec"]["template"]["cliques"]}
    dcds = by_kind(rendered(without_grove(claim)), "XDynamoComponentDeployment")
    assert dcds
    for dcd in dcds:
        (deployment,) = by_kind(render_xr(dcd), "Deployment")
        key = dcd["metadata"]["labels"]["nvidia.com/dynamo-component"].lower()
        assert deployment["spec"]["template"]["spec"] == grove_pods[key], key


def test_multinode_without_lws_is_a_fatal_naming_the_component() -> None:
    claim = without_grove(load_claim(REPO / "examples" / "v1alpha1" / "sglang-multinode.yaml"))
    operator_config = copy.deepcopy(PLATFORM)
    operator_config["data"]["orchestrators"] = {"lws": {"enabled": False}}
    rsp = render_graph_deployment(
        StepRequest(input={}, observed_composite=claim_to_xr(claim), required={"platform": [operator_config]})
    )
    (result,) = rsp.results
    assert result.severity == "fatal"
    assert result.message.startswith("spec.services.SglangWorker.multinode: no multinode orchestrator available")


def test_multinode_with_lws_composes_one_leaderworkerset() -> None:
    objects = rendered(without_grove(load_claim(REPO / "examples" / "v1alpha1" / "sglang-multinode.yaml")))
    assert by_kind(objects, "ConfigMap")[0]["metadata"]["name"] == "sglang-multinode-wait-leader-script"
    worker = next(d for d in by_kind(objects, "XDynamoComponentDeployment") if "multinode" in d["spec"])
    nested = render_xr(worker)
    assert [o["metadata"]["name"] for o in by_kind(nested, "LeaderWorkerSet")] == [
        worker["metadata"]["annotations"]["dynamo.fn.crossplane.io/claim-name"] + "-0"
    ]
    leader = by_kind(nested, "LeaderWorkerSet")[0]["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    assert "--dist-init-addr $(LWS_LEADER_ADDRESS):29500" in " ".join(leader["spec"]["containers"][0]["args"])


# --- status, rolling update and restart over observed DCDs -------------------------------------------


def render_step(xr: dict[str, Any], observed: dict[str, dict[str, Any]]) -> StepResponse:
    return render_graph_deployment(StepRequest(input={}, observed_composite=xr, observed_resources=observed))


def status_step(xr: dict[str, Any], rendered_rsp: StepResponse, observed: dict[str, dict[str, Any]]) -> StepResponse:
    desired = {k: v.resource for k, v in rendered_rsp.desired_resources.items()}
    composite = {"status": rendered_rsp.composite_status or {}}
    return graph_status(
        StepRequest(
            input={}, observed_composite=xr, observed_resources=observed,
            desired_composite=composite, desired_resources=desired,
        )
    )  # fmt: skip


def observed_dcd(
    desired: dict[str, Any], *, ready: int | None = None, created: str = "2026-01-01T00:00:00Z"
) -> dict[str, Any]:
    obj = copy.deepcopy(desired)
    replicas = obj["spec"]["replicas"]
    ready = replicas if ready is None else ready
    obj["metadata"].update(generation=1, creationTimestamp=created)
    available = "True" if ready >= replicas else "False"
    obj["status"] = {
        "observedGeneration": 1,
        "conditions": [{"type": "Available", "status": available, "reason": "DeploymentReady", "message": "m"}],
        "service": {
            "componentKind": "Deployment",
            "componentNames": [obj["metadata"]["annotations"]["dynamo.fn.crossplane.io/claim-name"]],
            "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": ready, "availableReplicas": ready,
        },
    }  # fmt: skip
    return obj


def all_observed(rsp: StepResponse, **ready: int) -> dict[str, dict[str, Any]]:
    out = {}
    for key, desired in rsp.desired_resources.items():
        obj = copy.deepcopy(desired.resource)
        if obj["kind"] == "XDynamoComponentDeployment":
            obj = observed_dcd(obj, ready=ready.get(key))
        out[key] = obj
    return out


def created(xr: dict[str, Any]) -> StepResponse:
    """The render once all the first reconcile desired exists."""
    return render_step(xr, all_observed(render_step(xr, {})))


def test_status_sums_the_dcds_and_is_successful_when_all_are_available() -> None:
    xr = claim_to_xr(load_claim(EXAMPLE))
    first = render_step(xr, {})
    pending = status_step(xr, first, {})
    assert pending.composite_status["state"] == "pending"
    observed = all_observed(created(xr))
    done = status_step(xr, render_step(xr, observed), observed)
    status = done.composite_status
    assert status["state"] == "successful"
    decode = status["services"]["VllmDecodeWorker"]
    assert decode["componentKind"] == "Deployment" and decode["readyReplicas"] == 2 and decode["replicas"] == 2
    assert decode["componentName"].startswith("vllm-disagg-ng-vllmdecodeworker-")
    ready = next(c for c in done.conditions if c.type == "DynamoGraphReady")
    assert (ready.status, ready.reason) == ("True", "all_resources_are_ready")


def test_a_worker_change_rolls_over_to_new_dcds() -> None:
    xr = claim_to_xr(load_claim(EXAMPLE))
    observed = all_observed(created(xr))
    old_keys = sorted(k for k in observed if "worker" in k)
    changed = copy.deepcopy(xr)
    changed["spec"]["services"]["VllmDecodeWorker"]["extraPodSpec"]["mainContainer"]["image"] = "r/vllm-runtime:1.1.0"
    changed["spec"]["services"]["VllmPrefillWorker"]["extraPodSpec"]["mainContainer"]["image"] = "r/vllm-runtime:1.1.0"

    during = render_step(changed, observed)
    new_keys = sorted(k for k in during.desired_resources if "worker" in k and k not in old_keys)
    assert len(new_keys) == 2 and set(old_keys) <= set(during.desired_resources)
    replicas = {k: during.desired_resources[k].resource["spec"]["replicas"] for k in old_keys + new_keys}
    # decode: D=2, surge 1 (annotation), unavailable floor(25% of 2)=0 -> old keeps 2, new gets 1
    decode_old, decode_new = (k for k in old_keys + new_keys if "decode" in k)
    assert (replicas[decode_old], replicas[decode_new]) == (2, 1)
    assert during.composite_status == {"operatorOriginVersion": "1.5.0", "rollingUpdate": {"phase": "InProgress"}}
    status = status_step(changed, during, observed)
    assert status.composite_status["state"] == "pending"
    reason = next(c for c in status.conditions if c.type == "DynamoGraphReady").reason
    assert reason == "rolling_update_in_progress"

    # the new DCDs are up and ready, the old ones scaled to nothing: the old ones go
    settled = dict(observed)
    for key in new_keys:
        new = copy.deepcopy(during.desired_resources[key].resource)
        new["spec"]["replicas"] = changed["spec"]["services"][new["spec"]["name"]]["replicas"]
        settled[key] = observed_dcd(new)
    for key in old_keys:
        settled[key] = observed_dcd(
            copy.deepcopy(observed[key]) | {"spec": {**observed[key]["spec"], "replicas": 0}}, ready=0
        )
    after = render_step(changed, settled)
    assert not set(old_keys) & set(after.desired_resources)
    assert after.composite_status == {
        "operatorOriginVersion": "1.5.0",
        "rollingUpdate": {"phase": "Completed", "updatedServices": ["VllmDecodeWorker", "VllmPrefillWorker"]},
    }


def test_sequential_restart_moves_through_the_dcds() -> None:
    xr = claim_to_xr(load_claim(EXAMPLE))
    observed = all_observed(created(xr))
    xr["spec"]["restart"] = {"id": "r1"}

    def restart_at(rsp: StepResponse) -> dict[str, str | None]:
        return {
            o.resource["spec"]["name"]: o.resource["spec"]["podTemplate"]["metadata"]["annotations"].get(
                "nvidia.com/restartAt"
            )
            for o in rsp.desired_resources.values()
            if o.resource["kind"] == "XDynamoComponentDeployment"
        }

    first = render_step(xr, observed)
    assert restart_at(first) == {"Frontend": "r1", "VllmDecodeWorker": None, "VllmPrefillWorker": None}
    status = status_step(xr, first, observed).composite_status["restart"]
    assert status == {"observedID": "r1", "phase": "Restarting", "inProgress": ["Frontend"]}

    # the frontend's DCD carries r1, its step has seen it and it is available again
    xr["status"] = {"restart": status}
    frontend_key = next(k for k in observed if k == "component-frontend")
    observed[frontend_key] = observed_dcd(first.desired_resources[frontend_key].resource)
    second = render_step(xr, observed)
    assert restart_at(second) == {"Frontend": "r1", "VllmDecodeWorker": "r1", "VllmPrefillWorker": None}
    status = status_step(xr, second, observed).composite_status["restart"]
    assert status["inProgress"] == ["VllmDecodeWorker"]


def test_crank_renders_the_nested_dcd_like_the_in_process_render(functions_file: Path, tmp_path: Path) -> None:
    dcd = next(o for o in rendered(load_claim(EXAMPLE)) if o["kind"] == "XDynamoComponentDeployment")
    composition = find_composition(dcd, load_documents(REPO / "compositions"))
    (tmp_path / "xr.yaml").write_text(yaml.safe_dump(dcd))
    (tmp_path / "composition.yaml").write_text(yaml.safe_dump(composition))
    theirs = crank_render(str(tmp_path / "xr.yaml"), str(tmp_path / "composition.yaml"), str(functions_file))
    out = render(dcd, composition, converge=False)
    assert dump_documents([out.composite, *out.composed]) == theirs
    assert any(o["kind"] == "Deployment" for o in out.composed)


def with_resource_name(obj: dict[str, Any], resource: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"].setdefault("annotations", {})["crossplane.io/composition-resource-name"] = resource
    out["metadata"].setdefault("uid", f"uid-{resource}")
    return out


def crank_equals_in_process(
    xr: dict[str, Any], observed: dict[str, dict[str, Any]], functions_file: Path, tmp_path: Path
) -> list[dict[str, Any]]:
    composition = find_composition(xr, load_documents(REPO / "compositions"))
    docs = [with_resource_name(o, r) for r, o in sorted(observed.items())]
    (tmp_path / "xr.yaml").write_text(yaml.safe_dump(xr))
    (tmp_path / "composition.yaml").write_text(yaml.safe_dump(composition))
    (tmp_path / "observed.yaml").write_text(yaml.safe_dump_all(docs))
    theirs = crank_render(
        str(tmp_path / "xr.yaml"), str(tmp_path / "composition.yaml"), str(functions_file),
        "-o", str(tmp_path / "observed.yaml"),
    )  # fmt: skip
    out = render(xr, composition, docs, converge=False)
    ours = dump_documents([out.composite, *out.composed])
    assert list(yaml.safe_load_all(ours)) == list(yaml.safe_load_all(theirs))
    assert ours == theirs
    return list(yaml.safe_load_all(ours))


def test_crank_agrees_on_a_ready_graph_and_a_rolling_update(functions_file: Path, tmp_path: Path) -> None:
    xr = claim_to_xr(load_claim(EXAMPLE))
    observed = all_observed(created(xr))
    ready_xr, *_ = crank_equals_in_process(xr, observed, functions_file, tmp_path)
    assert ready_xr["status"]["state"] == "successful"

    changed = copy.deepcopy(xr)
    changed["spec"]["services"]["VllmDecodeWorker"]["extraPodSpec"]["mainContainer"]["image"] = "r/vllm-runtime:1.1.0"
    rolling_xr, *composed = crank_equals_in_process(changed, observed, functions_file, tmp_path)
    # the render step's status.rollingUpdate reaches the XR through the status step, in both renders
    assert rolling_xr["status"]["rollingUpdate"] == {"phase": "InProgress"}
    assert rolling_xr["status"]["state"] == "pending"
    decode = [o for o in composed if o["metadata"]["labels"].get("nvidia.com/dynamo-component") == "VllmDecodeWorker"]
    assert sorted(o["spec"]["replicas"] for o in decode) == [1, 2]


def test_an_observed_scaling_adapter_drives_the_dcd_replicas() -> None:
    claim = without_grove(load_claim(REPO / "examples" / "dgd" / "vllm-autoscaled.yaml"))
    xr = claim_to_xr(claim)
    first = render_step(xr, {})
    adapters = {k: r.resource for k, r in first.desired_resources.items() if k.startswith("scaling-adapter-")}
    assert adapters
    key, adapter = sorted(adapters.items())[0]
    component = adapter["spec"]["dgdRef"]["componentName"]
    scaled = copy.deepcopy(adapter)
    scaled["spec"]["replicas"] = 5
    again = render_step(xr, {key: scaled})
    (dcd,) = [
        r.resource
        for r in again.desired_resources.values()
        if r.resource["kind"] == "XDynamoComponentDeployment"
        and r.resource["metadata"]["labels"]["nvidia.com/dynamo-component"] == component
    ]
    assert dcd["spec"]["replicas"] == 5
    assert again.desired_resources[key].resource["spec"]["replicas"] == 5


@pytest.mark.parametrize("example", ["dgd/vllm-disagg-no-grove.yaml", "v1alpha1/vllm-disagg-no-grove.yaml"])
def test_a_namespaced_graph_reports_no_problem_for_its_valid_component_deployments(example: str) -> None:
    """The nested DCDs of a namespaced DGD are composed without a namespace (Crossplane gives them the DGD's);
    checking them as the DCD's step will must not take them for DCDs missing their claim's namespace."""
    xr = namespaced_xr(load_claim(REPO / "examples" / example))
    rsp = render_step(xr, {})
    assert not rsp.fatal
    assert rsp.results == []
    assert any(r.resource["kind"] == "DynamoComponentDeployment" for r in rsp.desired_resources.values())


def test_a_dcd_its_step_will_refuse_is_still_composed_and_reported_on_the_graph() -> None:
    claim = without_grove(load_claim(REPO / "examples" / "v1alpha1" / "sglang-multinode.yaml"))
    claim["spec"]["services"]["SglangWorker"]["extraPodSpec"]["mainContainer"] = {
        "image": "x:1.0.0"
    }  # no command, no args
    rsp = render_step(claim_to_xr(claim), {})
    (warning,) = rsp.results
    assert warning.severity == "warning"
    assert warning.message.startswith("spec.services.SglangWorker: its DynamoComponentDeployment cannot render: ")
    assert "needs a non-empty args" in warning.message
    assert any(r.resource["spec"].get("name") == "SglangWorker" for r in rsp.desired_resources.values()
               if r.resource["kind"] == "XDynamoComponentDeployment")  # fmt: skip

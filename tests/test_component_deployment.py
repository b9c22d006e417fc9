"""DynamoComponentDeployment: the single-node Deployment path and its status (docs/upstream/operator.md §1.4, §3.2,
§3.3)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from fixtures.rendering import check_resource
from fixtures.tooling import REPO, crank_render, require_shared
from functions.contract import DEFAULT_TTL_SECONDS, READY_TTL_SECONDS, StepRequest, StepResponse
from functions.kinds.component.component_step import component_deployment
from functions.kube.deployment import deployment_strategy
from functions.tooling.manifests import claim_to_xr, dump_documents, find_composition, load_documents
from functions.tooling.pipeline import render
from functions.tooling.validation import derive_crds, validate_object

DCD_EXAMPLES = sorted((REPO / "examples" / "dcd").glob("*.yaml"))
WORKER = REPO / "examples" / "dcd" / "vllm-worker.yaml"
FRONTEND = REPO / "examples" / "v1alpha1" / "dcd-frontend.yaml"


def xr_of(path: Path) -> dict[str, Any]:
    return claim_to_xr(load_documents(path)[0])


def step(xr: dict[str, Any], observed: dict[str, dict[str, Any]] | None = None) -> StepResponse:
    return component_deployment(StepRequest(input={}, observed_composite=xr, observed_resources=observed or {}))


def ready_deployment(deployment: dict[str, Any], ready: bool = True) -> dict[str, Any]:
    obj = copy.deepcopy(deployment)
    replicas = obj["spec"]["replicas"]
    obj["metadata"]["generation"] = 1
    obj["status"] = {
        "observedGeneration": 1,
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": replicas if ready else 0,
        "availableReplicas": replicas if ready else 0,
        "conditions": [{"type": "Available", "status": "True" if ready else "False"}],
    }
    return obj


def both_renders(
    xr: dict[str, Any], functions_file: Path, tmp_path: Path, observed: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    composition = find_composition(xr, load_documents(REPO / "compositions"))
    (tmp_path / "xr.yaml").write_text(yaml.safe_dump(xr))
    (tmp_path / "composition.yaml").write_text(yaml.safe_dump(composition))
    extra = []
    if observed:
        (tmp_path / "observed.yaml").write_text(yaml.safe_dump_all(observed))
        extra = ["-o", str(tmp_path / "observed.yaml")]
    theirs = crank_render(str(tmp_path / "xr.yaml"), str(tmp_path / "composition.yaml"), str(functions_file), *extra)
    out = render(xr, composition, observed, converge=False)
    ours = dump_documents([out.composite, *out.composed])
    assert list(yaml.safe_load_all(ours)) == list(yaml.safe_load_all(theirs))
    assert ours == theirs
    return list(yaml.safe_load_all(ours))


def conditions(xr: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in xr["status"]["conditions"]}


@pytest.mark.parametrize("path", DCD_EXAMPLES, ids=[p.stem for p in DCD_EXAMPLES])
def test_crank_render_equals_in_process_render(path: Path, functions_file: Path, tmp_path: Path) -> None:
    xr, *composed = both_renders(xr_of(path), functions_file, tmp_path)
    kinds = [o["kind"] for o in composed]
    multinode = "multinode" in xr_of(path)["spec"]
    assert ("LeaderWorkerSet" in kinds) is multinode and ("Deployment" in kinds) is not multinode
    for obj in composed:
        clean = copy.deepcopy(obj)
        clean["metadata"].pop("ownerReferences", None)
        check_resource(clean)
    assert conditions(xr)["Available"] == ("Unknown", "Reconciling")


def test_crank_status_from_an_observed_deployment(functions_file: Path, tmp_path: Path) -> None:
    xr = xr_of(WORKER)
    first = render(xr, find_composition(xr, load_documents(REPO / "compositions")))
    deployment = next(o for o in first.composed if o["kind"] == "Deployment")
    out, *_ = both_renders(xr, functions_file, tmp_path, [ready_deployment(deployment)])
    assert conditions(out)["Available"] == ("True", "DeploymentReady")
    assert conditions(out)["DynamoComponentReady"] == ("True", "ComponentReady")
    assert conditions(out)["Ready"][0] == "True"
    assert out["status"]["component"] == {
        "componentKind": "Deployment",
        "componentNames": ["vllm-worker"],
        "replicas": 2,
        "updatedReplicas": 2,
        "readyReplicas": 2,
        "availableReplicas": 2,
    }


def test_deployment_of_a_v1beta1_worker() -> None:
    rsp = step(xr_of(WORKER))
    assert not rsp.fatal
    deployment = rsp.desired_resources["deployment"].resource
    assert deployment["metadata"]["name"] == "vllm-worker"
    assert deployment["metadata"]["namespace"] == "dynamo-demo"
    assert "nvidia.com/selector" not in deployment["metadata"]["labels"]  # only the pods carry it (upstream HEAD)
    assert deployment["spec"]["selector"] == {"matchLabels": {"nvidia.com/selector": "vllm-worker"}}
    assert deployment["spec"]["replicas"] == 2
    # The max-surge annotation is on the claim's metadata, not spec: upstream reads the DCD spec's only.
    assert deployment["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
    }
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert labels["nvidia.com/selector"] == "vllm-worker"
    assert "nvidia.com/dynamo-graph-deployment-name" not in labels  # no DGD: upstream's standalone DCD pods carry none
    assert labels["nvidia.com/dynamo-component"] == "VllmWorker"
    (main,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "main"]
    assert main["resources"]["limits"]["nvidia.com/gpu"] == "1"
    service = rsp.desired_resources["service"].resource
    assert service["metadata"]["name"] == "vllm-worker"
    assert service["spec"]["ports"][0]["name"] == "system"
    # A standalone DCD composes the discovery ServiceAccount its pods run as.
    assert "discovery-serviceaccount" in rsp.desired_resources
    assert rsp.desired_resources["deployment"].ready is False
    assert rsp.desired_resources["service"].ready is True
    kubernetes_validate.validate(deployment, "1.33", strict=True)


def test_v1alpha1_dcd_of_a_dgd_takes_the_graph_name_from_the_label() -> None:
    rsp = step(xr_of(FRONTEND))
    deployment = rsp.desired_resources["deployment"].resource
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert pod_labels["nvidia.com/dynamo-graph-deployment-name"] == "vllm-agg"
    assert pod_labels["nvidia.com/dynamo-namespace"] == "dynamo-demo-vllm-agg"
    assert pod_labels["nvidia.com/selector"] == "vllm-agg-frontend"
    assert rsp.desired_resources["service"].resource["spec"]["ports"][0]["name"] == "http"
    assert "discovery-serviceaccount" not in rsp.desired_resources  # the DGD composes it


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({}, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}),
        (
            {
                "nvidia.com/deployment-rolling-update-max-surge": "2",
                "nvidia.com/deployment-rolling-update-max-unavailable": "0",
            },
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 0}},
        ),
        ({"nvidia.com/deployment-strategy": "Recreate"}, {"type": "Recreate"}),
    ],
)
def test_deployment_strategy(annotations: dict[str, str], expected: dict[str, Any]) -> None:
    assert deployment_strategy(annotations) == expected


def test_multinode_renders_one_leaderworkerset_with_every_replica() -> None:
    xr = xr_of(WORKER)
    xr["spec"]["multinode"] = {"nodeCount": 2}
    xr["spec"]["replicas"] = 2
    rsp = step(xr)
    assert not rsp.fatal, rsp.results
    kinds = {k: r.resource["kind"] for k, r in rsp.desired_resources.items()}
    assert "deployment" not in kinds
    assert [k for k, v in kinds.items() if v == "LeaderWorkerSet"] == ["leaderworkerset-0"]
    assert rsp.desired_resources["leaderworkerset-0"].resource["spec"]["replicas"] == 2
    assert "PodGroup" not in kinds.values()
    service = rsp.desired_resources["service"].resource
    assert service["spec"]["selector"]["role"] == "leader"
    assert rsp.conditions[0].reason == "Reconciling"


def test_multinode_without_lws_is_a_deployment_as_upstream() -> None:
    xr = xr_of(WORKER)
    xr["spec"]["multinode"] = {"nodeCount": 2}
    operator_config = {
        "apiVersion": "apiextensions.crossplane.io/v1beta1",
        "kind": "EnvironmentConfig",
        "metadata": {"name": "dynamo-platform"},
        "data": {"orchestrators": {"lws": {"enabled": False}}},
    }
    request = StepRequest(input={}, observed_composite=xr, required={"platform": [operator_config]})
    rsp = component_deployment(request)
    assert not rsp.fatal, rsp.results
    assert rsp.desired_resources["deployment"].resource["kind"] == "Deployment"
    assert not any(r.resource["kind"] == "LeaderWorkerSet" for r in rsp.desired_resources.values())


@pytest.mark.parametrize("ready", [True, False])
def test_status_from_the_observed_deployment(ready: bool) -> None:
    xr = xr_of(FRONTEND)
    xr["metadata"]["generation"] = 3
    deployment = step(xr).desired_resources["deployment"].resource
    observed = ready_deployment(deployment, ready)
    rsp = step(xr, {"deployment": observed})
    by_type = {c.type: (c.status, c.reason) for c in rsp.conditions}
    progressing = ("True", "RolloutComplete")  # not ready for want of available pods, not of updated ones
    if ready:
        assert by_type == {
            "Available": ("True", "DeploymentReady"),
            "DynamoComponentReady": ("True", "ComponentReady"),
            "Progressing": progressing,
        }
    else:
        assert by_type == {
            "Available": ("False", "DeploymentNotReady"),
            "DynamoComponentReady": ("False", "ComponentNotReady"),
            "Progressing": progressing,
        }
    assert rsp.composite_ready is ready
    assert rsp.desired_resources["deployment"].ready is ready
    assert rsp.ttl_seconds == (READY_TTL_SECONDS if ready else DEFAULT_TTL_SECONDS)  # not re-applied each minute
    assert rsp.composite_status == {
        "observedGeneration": 3,
        "podSelector": {"nvidia.com/selector": "vllm-agg-frontend"},
        "service": {
            "componentKind": "Deployment",
            "componentName": "vllm-agg-frontend",
            "componentNames": ["vllm-agg-frontend"],
            "replicas": 1,
            "updatedReplicas": 1,
            "readyReplicas": 1 if ready else 0,
            "availableReplicas": 1 if ready else 0,
        },
    }


def _claim_crd() -> dict[str, Any]:
    xrd = load_documents(REPO / "xrds" / "dynamocomponentdeployments.yaml")[0]
    return next(c for c in derive_crds(xrd) if c["spec"]["names"]["kind"] == "DynamoComponentDeployment")


@pytest.mark.parametrize("path", DCD_EXAMPLES, ids=[p.stem for p in DCD_EXAMPLES])
def test_examples_validate_against_the_claim_crd(path: Path) -> None:
    assert validate_object(load_documents(path)[0], _claim_crd()) == []


def test_corpus_sample_validates_against_the_claim_crd() -> None:
    """Upstream's sample has ``spec:`` (null). The API server prunes a null spec, and a Crossplane claim
    requires one (upstream's DCD CRD does not): rejected for that alone, as the empty DGD sample is."""
    sample = require_shared("corpus") / "v1alpha1/deploy/operator/config/samples"
    doc = load_documents(sample / "nvidia.com_v1alpha1_dynamocomponentdeployment.yaml")[0]
    assert doc["spec"] is None
    violations = [(v.path, v.rule) for v in validate_object(doc, _claim_crd())]
    assert ("spec", "required") in violations
    assert {p for p, _ in violations} <= {"spec", "<root>"}
    doc["spec"] = {}
    assert validate_object(doc, _claim_crd()) == []


def test_mixed_shapes_are_rejected_by_the_claim_crd() -> None:
    doc = load_documents(WORKER)[0]
    doc["spec"]["componentType"] = "worker"  # a v1alpha1 field next to v1beta1's
    messages = [str(v) for v in validate_object(doc, _claim_crd())]
    assert any("spec mixes v1alpha1 fields" in m for m in messages), messages


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"ingress": {"enabled": True}}, "ingress.host is required when ingress is enabled"),
        ({"volumeMounts": [{"name": "cache"}]}, "mountPoint is required unless useAsCompilationCache is set"),
        ({"componentType": "epp", "replicas": 2}, "an epp component runs exactly one replica"),
        (
            {"annotations": {"nvidia.com/vllm-distributed-executor-backend": "mpi"}},
            "annotation nvidia.com/vllm-distributed-executor-backend must be mp or ray",
        ),
    ],
)
def test_the_shared_service_rules_guard_a_dcd_spec(change: dict[str, Any], fragment: str) -> None:
    """Upstream's DCD webhook runs the DGD's per-service rules on the DCD spec (§5.3), here as XRD CEL."""
    crds = {
        crd["spec"]["names"]["kind"]: crd
        for crd in derive_crds(load_documents(REPO / "xrds" / "dynamocomponentdeployments.yaml")[0])
    }
    claim = load_documents(FRONTEND)[0]
    assert validate_object(claim, crds["DynamoComponentDeployment"]) == []
    bad = copy.deepcopy(claim)
    bad["spec"].update(change)
    violations = validate_object(bad, crds["DynamoComponentDeployment"])
    assert any(fragment in str(v) for v in violations), violations


def test_a_dcd_backend_framework_is_immutable() -> None:
    crds = {
        crd["spec"]["names"]["kind"]: crd
        for crd in derive_crds(load_documents(REPO / "xrds" / "dynamocomponentdeployments.yaml")[0])
    }
    old = load_documents(WORKER)[0]
    new = copy.deepcopy(old)
    new["spec"]["backendFramework"] = "sglang"
    violations = validate_object(new, crds["DynamoComponentDeployment"], old=old)
    assert any("spec.backendFramework is immutable" in str(v) for v in violations), violations
    assert validate_object(old, crds["DynamoComponentDeployment"], old=old) == []


def _pod_templates(rsp: StepResponse) -> list[dict[str, Any]]:
    """The pod templates of the DCD's workload: the Deployment's, or the LeaderWorkerSet's leader and worker."""
    out = []
    for desired in rsp.desired_resources.values():
        spec = desired.resource.get("spec") or {}
        if desired.resource["kind"] == "Deployment":
            out.append(spec["template"])
        elif desired.resource["kind"] == "LeaderWorkerSet":
            out += [spec["leaderWorkerTemplate"]["leaderTemplate"], spec["leaderWorkerTemplate"]["workerTemplate"]]
    return out


@pytest.mark.parametrize("multinode", [False, True], ids=["deployment", "leaderworkerset"])
def test_a_model_ref_names_the_base_model_on_the_pods_and_the_service(multinode: bool) -> None:
    """Upstream GetDCDKubeAnnotations (with AddBaseModelAnnotation) annotates a DCD's pods and Service."""
    xr = xr_of(WORKER)
    xr["spec"]["modelRef"] = {"name": "Qwen/Qwen3-0.6B"}
    if multinode:
        xr["spec"]["multinode"] = {"nodeCount": 2}
    rsp = step(xr)
    assert not rsp.fatal, rsp.results
    templates = _pod_templates(rsp)
    assert len(templates) == (2 if multinode else 1)
    for template in templates:
        assert template["metadata"]["annotations"]["nvidia.com/dynamo-base-model"] == "Qwen/Qwen3-0.6B"
    service = rsp.desired_resources["service"].resource
    assert service["metadata"]["annotations"] == {"nvidia.com/dynamo-base-model": "Qwen/Qwen3-0.6B"}


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (
            lambda spec: spec["podTemplate"]["spec"]["containers"][0].update(
                volumeMounts=[{"name": "c", "mountPath": ""}]
            ),
            "spec.podTemplate.spec.containers[0].volumeMounts[0].mountPath: is required",
        ),
        (lambda spec: spec.update(type="epp", replicas=1), "spec.eppConfig: an epp component needs eppConfig"),
    ],
    ids=["main-mount-without-path", "epp-without-config"],
)
def test_a_v1beta1_dcd_is_checked_as_v1alpha1_too(change: Any, fragment: str) -> None:
    """Upstream's webhook checks a v1beta1 DCD in its v1alpha1 form as well (tests/test_operator_verdicts.py asks
    the operator): the step refuses what that form would, naming the field as written."""
    xr = xr_of(WORKER)
    change(xr["spec"])
    rsp = step(xr)
    messages = [r.message for r in rsp.results if r.severity == "fatal"]
    assert any(fragment in m for m in messages), rsp.results

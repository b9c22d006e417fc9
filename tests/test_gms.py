"""The intra-pod GPU Memory Service: the ResourceClaimTemplate, the ``gms-server`` sidecar and client wiring on
both pathways, upstream's rules, and checkpoints taken and restored with it (reference
docs/upstream/checkpoint-gms-dgdr-model.md §1.3, §1.4, §1.7, §3.2-§3.4)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fixtures.gms import COMPOSITIONS, PLATFORM, graph, of_kind, run, worker_pod
from fixtures.tooling import REPO
from functions.tooling.manifests import find_composition, load_documents
from functions.tooling.pipeline import RenderError, render
from functions.tooling.render import admitted_xr

Obj = dict[str, Any]


def assert_intrapod_gms(pod: Obj, claim_template: str, clients: tuple[str, ...] = ("main",)) -> None:
    assert pod["resourceClaims"] == [{"name": "intrapod-shared-gpu", "resourceClaimTemplateName": claim_template}]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
    assert {"name": "gms-intrapod-control", "emptyDir": {}} in pod["volumes"]
    (server,) = [c for c in pod["initContainers"] if c["name"] == "gms-server"]
    assert server["command"] == ["python3", "-m", "gpu_memory_service.cli.server"]
    assert server["restartPolicy"] == "Always" and not any(k.endswith("Probe") for k in server)
    containers = {c["name"]: c for c in pod["containers"]}
    assert server["image"] == containers[clients[0]]["image"]
    for container in (server, *(containers[n] for n in clients)):
        assert {"name": "intrapod-shared-gpu"} in container["resources"]["claims"]
        assert {"name": "GMS_SOCKET_DIR", "value": "/gms-intrapod-control"} in container["env"]
        assert {"name": "gms-intrapod-control", "mountPath": "/gms-intrapod-control"} in container["volumeMounts"]
        gpus = {**container["resources"].get("limits", {}), **container["resources"].get("requests", {})}
        assert "nvidia.com/gpu" not in gpus, "the GPUs moved to the claim"


def test_the_grove_worker_shares_its_gpus_through_the_gms_sidecar() -> None:
    out = run(graph())
    pod = worker_pod(out)
    assert_intrapod_gms(pod, "gms-vllmworker-gpu")
    assert pod["containers"][0]["resources"]["requests"] == {"cpu": "1"}, "other resources stay"
    (template,) = of_kind(out.composed, "ResourceClaimTemplate")
    assert template["metadata"]["name"] == "gms-vllmworker-gpu" and template["metadata"]["namespace"] == "demo"
    assert template["spec"] == {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}}]}}}  # fmt: skip


def test_extra_clients_and_the_device_class() -> None:
    sidecar = {"name": "loader", "image": "loader:1", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    claim = graph({"deviceClassName": "gpu.example.com", "extraClientContainers": ["loader"]})
    claim["spec"]["components"][0]["podTemplate"]["spec"]["containers"].append(sidecar)
    out = run(claim)
    assert_intrapod_gms(worker_pod(out), "gms-vllmworker-gpu", ("main", "loader"))
    (template,) = of_kind(out.composed, "ResourceClaimTemplate")
    assert template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.example.com"


def test_the_component_pathway_deployment_gets_it_too() -> None:
    out = run(graph(grove=False))
    (dcd,) = of_kind(out.composed, "DynamoComponentDeployment")
    assert of_kind(out.composed, "ResourceClaimTemplate"), "the DGD composes the claim template"
    nested = render(dcd, find_composition(dcd, COMPOSITIONS), [], PLATFORM, converge=False)
    (deployment,) = of_kind(nested.composed, "Deployment")
    assert_intrapod_gms(deployment["spec"]["template"]["spec"], "gms-vllmworker-gpu")
    assert not of_kind(nested.composed, "ResourceClaimTemplate"), "a DGD's DCD composes no claim template"


def test_a_standalone_dcd_composes_its_own_claim_template() -> None:
    dcd = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "decode", "namespace": "demo"},
        "spec": {
            "backendFramework": "vllm", "componentType": "worker", "gpuMemoryService": {"enabled": True},
            "resources": {"limits": {"gpu": "1"}},
            "extraPodSpec": {"mainContainer": {"image": "img", "command": ["python3", "-m", "dynamo.vllm"]}},
        },
    }  # fmt: skip
    out = run(dcd)
    (template,) = of_kind(out.composed, "ResourceClaimTemplate")
    assert template["metadata"]["name"] == "decode-decode-gpu"
    (deployment,) = of_kind(out.composed, "Deployment")
    assert_intrapod_gms(deployment["spec"]["template"]["spec"], "decode-decode-gpu")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c, p: p[0]["data"].update(dra={"enabled": False}), "requires DRA (Dynamic Resource Allocation)"),
        (lambda c, p: c["spec"]["components"][0].update(type="frontend"),
         "GPU memory service is only supported for worker, prefill, or decode components"),
        (lambda c, p: c["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0].update(resources={}),
         "requires podTemplate.spec.containers[main].resources.limits.nvidia.com/gpu >= 1"),
        (lambda c, p: c["spec"]["components"][0]["experimental"]["gpuMemoryService"].update(
            extraClientContainers=["ghost"]), "'ghost' does not name a container in podTemplate.spec.containers"),
    ],
    ids=["dra-off", "frontend", "no-gpus", "unknown-client"],
)  # fmt: skip
def test_upstreams_rules_are_fatal_naming_the_field(change: Any, message: str) -> None:
    claim, operator_config = graph(), copy.deepcopy(PLATFORM)
    change(claim, operator_config)
    with pytest.raises(RenderError, match=r"spec\.components\[0\]\.experimental\.gpuMemoryService") as err:
        run(claim, required=operator_config)
    assert message in str(err.value)


def test_checkpoint_gms_clients_need_an_intra_pod_gms() -> None:
    claim = graph(checkpoint={"enabled": True, "job": {"gmsClientContainers": ["saver"]}})
    del claim["spec"]["components"][0]["experimental"]["gpuMemoryService"]
    with pytest.raises(RenderError, match=r"job\.gmsClientContainers: requires gpuMemoryService to be set"):
        run(claim)


# --- checkpoints with a GPU memory service ----------------------------------------------------------------------


def test_an_auto_checkpoint_is_taken_and_restored_with_the_gms() -> None:
    saver = {"name": "saver", "image": "saver:1"}
    claim = graph(checkpoint={
        "enabled": True, "startupPolicy": "WaitForCheckpoint",
        "job": {"gmsClientContainers": ["saver"], "podTemplate": {"spec": {"containers": [saver]}}},
    })  # fmt: skip
    out = run(claim)
    (checkpoint,) = of_kind(out.composed, "DynamoCheckpoint")
    name = checkpoint["metadata"]["name"]
    assert checkpoint["spec"]["gpuMemoryService"] == {
        "enabled": True, "mode": "intraPod", "deviceClassName": "gpu.nvidia.com", "extraClientContainers": ["saver"],
    }  # fmt: skip
    job_pod = checkpoint["spec"]["job"]["podTemplateSpec"]["spec"]
    assert_intrapod_gms(job_pod, f"{name}-worker-gpu", ("main", "saver"))
    templates = {t["metadata"]["name"]: t for t in of_kind(out.composed, "ResourceClaimTemplate")}
    assert set(templates) == {"gms-vllmworker-gpu", f"{name}-worker-gpu"}
    assert templates[f"{name}-worker-gpu"]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2

    # The checkpoint's own step finds the template prepared and counts the claim's GPUs for the wrapper.
    xr = admitted_xr(copy.deepcopy(checkpoint), "demo", "Strict")
    step = render(xr, find_composition(xr, COMPOSITIONS), [], [*PLATFORM, templates[f"{name}-worker-gpu"]],
                  converge=False)  # fmt: skip
    (job,) = of_kind(step.composed, "Job")
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["cuda-checkpoint"]

    # Ready: the worker restores with one gms-server and its wiring.
    ready = copy.deepcopy(checkpoint)
    ready["status"] = {"phase": "Ready", "checkpointID": name.removeprefix("checkpoint-")}
    pod = worker_pod(run(claim, observed=[ready]))
    assert [c["name"] for c in pod["initContainers"]].count("gms-server") == 1
    assert_intrapod_gms(pod, "gms-vllmworker-gpu")
    assert {"name": "DYN_SNAPSHOT_RESTORE_STANDBY", "value": "1"} in pod["containers"][0]["env"]


def test_a_gms_component_cannot_restore_from_a_checkpoint_without_one() -> None:
    claim = graph(checkpoint={"enabled": True, "checkpointRef": "plain"})
    plain = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoCheckpoint",
        "metadata": {"name": "plain", "namespace": "demo"},
        "spec": {"identity": {"model": "m", "backendFramework": "vllm"}, "job": {"podTemplateSpec": {}}},
        "status": {"phase": "Ready", "checkpointID": "abc"},
    }
    with pytest.raises(RenderError, match="gpuMemoryService restore requires resolved checkpoint 'plain'"):
        run(claim, required=[*PLATFORM, plain])


# --- the inter-pod layout (Grove, single-node) -------------------------------------------------------------------


def inter_pod(failover: Obj | None = None) -> Obj:
    claim = graph({"mode": "InterPod"})
    if failover is not None:
        claim["spec"]["components"][0]["experimental"]["failover"] = failover
        claim["metadata"]["annotations"] = {"nvidia.com/dynamo-kube-discovery-mode": "container"}
    return claim


def test_the_inter_pod_layout_is_a_weight_server_and_engines_sharing_a_claim_per_replica() -> None:
    from fixtures.rendering import check_resource

    out = run(inter_pod())
    (pcs,) = of_kind(out.composed, "PodCliqueSet")
    check_resource(pcs)  # against Grove's CRD
    template = pcs["spec"]["template"]
    assert template["cliqueStartupType"] == "CliqueStartupTypeExplicit"
    assert template["resourceClaimTemplates"] == [{"name": "vllmworker-gpu-rank-0", "templateSpec": {
        "metadata": {}, "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}}]}}}}]  # fmt: skip
    (group,) = template["podCliqueScalingGroups"]
    assert group == {
        "name": "vllmworker", "cliqueNames": ["vllmworker-gms-0", "vllmworker"], "replicas": 1, "minAvailable": 1,
        "resourceSharing": [{"name": "vllmworker-gpu-rank-0", "scope": "PerReplica",
                             "filter": {"childCliqueNames": ["vllmworker-gms-0", "vllmworker"]}}],
    }  # fmt: skip
    server, engine = template["cliques"]
    assert (server["name"], server["spec"]["replicas"], engine["name"], engine["spec"]["replicas"]) == (
        "vllmworker-gms-0", 1, "vllmworker", 1)  # fmt: skip
    assert engine["spec"]["startsAfter"] == ["vllmworker-gms-0"]
    assert "nvidia.com/dynamo-discovery-backend" not in server["labels"], "the weight server is not discovered"
    main = server["spec"]["podSpec"]["containers"][0]
    assert main["command"] == ["bash", "-c"] and "gpu_memory_service.cli.server" in main["args"][0]
    assert (
        main["startupProbe"]["exec"]["command"][-1] == "test $(ls /run/gms/shared/gms_*.sock 2>/dev/null | wc -l) -ge 4"
    )
    assert "livenessProbe" not in main and "readinessProbe" not in main
    engine_main = engine["spec"]["podSpec"]["containers"][0]
    env = {e["name"]: e for e in engine_main["env"]}
    assert env["ENGINE_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.labels['grove.io/podclique-pod-index']"
    assert env["GMS_SOCKET_DIR"]["value"] == "/run/gms/shared"
    assert env["FAILOVER_LOCK_PATH"]["value"] == "/run/gms/shared/failover.lock"
    assert "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS" not in env and "DYN_VLLM_GMS_SHADOW_MODE" not in env
    assert engine_main["args"].count("--load-format") == 1, "the graph's own --load-format gms is kept, not doubled"
    for pod in (server["spec"]["podSpec"], engine["spec"]["podSpec"]):
        container = pod["containers"][0]
        assert "nvidia.com/gpu" not in (container["resources"].get("limits") or {})
        assert {"name": "gms-shared", "hostPath": {"path": "/run/gms", "type": "DirectoryOrCreate"}} in pod["volumes"]
        mount = {"name": "gms-shared", "mountPath": "/run/gms/shared"}
        mount["subPathExpr"] = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)/rank-0"
        assert mount in container["volumeMounts"]
        (fix,) = [c for c in pod["initContainers"] if c["name"] == "fix-gms-perms"]
        assert fix["command"] == ["sh", "-c", "chmod 1777 /run/gms/shared"]
        assert fix["securityContext"] == {"runAsUser": 0, "runAsNonRoot": False}
    assert of_kind(out.composed, "ResourceClaimTemplate"), "the DGD-level claim template is still composed"


def test_inter_pod_failover_runs_a_primary_and_its_shadows() -> None:
    claim = inter_pod({"mode": "InterPod", "numShadows": 1})
    claim["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["args"] = ["--model", "m"]
    (pcs,) = of_kind(run(claim).composed, "PodCliqueSet")
    _, engine = pcs["spec"]["template"]["cliques"]
    assert engine["spec"]["replicas"] == 2
    assert engine["labels"]["nvidia.com/dynamo-failover-engine-group-member"] == "true"
    pod = engine["spec"]["podSpec"]
    assert pod["restartPolicy"] == "Never"
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["DYN_VLLM_GMS_SHADOW_MODE"] == "true"
    assert pod["containers"][0]["args"][-2:] == ["--load-format", "gms"], "injected when absent"


@pytest.mark.parametrize(
    ("failover", "shadow"),
    [
        (None, False),  # standalone inter-pod GMS: engines are active clients of the weight server
        ({"mode": "InterPod", "numShadows": 1}, True),
    ],
)
def test_the_shadow_mode_switch_is_on_every_clique_of_an_inter_pod_failover(failover: Obj | None, shadow: bool) -> None:
    """Upstream's vLLM backend sets it on the component's main container, the base the weight server is made from
    too (backend_vllm.go UpdateContainer; graph.go generatePodSpecForRole)."""
    (pcs,) = of_kind(run(inter_pod(failover)).composed, "PodCliqueSet")
    for clique in pcs["spec"]["template"]["cliques"]:
        env = {e["name"]: e.get("value") for e in clique["spec"]["podSpec"]["containers"][0]["env"]}
        assert (env.get("DYN_VLLM_GMS_SHADOW_MODE") == "true") is shadow, clique["name"]


def test_inter_pod_needs_grove_and_vllm() -> None:
    claim = inter_pod()
    claim["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}
    with pytest.raises(
        RenderError, match=r"gpuMemoryService\.mode: the inter-pod GPU memory service requires the Grove"
    ):
        run(claim)
    claim = inter_pod()
    claim["spec"]["backendFramework"] = "sglang"
    claim["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["command"] = [
        "python3",
        "-m",
        "dynamo.sglang",
    ]
    with pytest.raises(RenderError, match=r"supported only for vLLM \(detected backend: sglang\)"):
        run(claim)


def test_the_status_step_reads_the_inter_pod_scaling_group() -> None:
    out = run(inter_pod())
    assert out.composite["status"]["components"]["VllmWorker"]["componentKind"] == "PodCliqueScalingGroup"


def test_the_inter_pod_layout_cannot_change_on_update() -> None:
    from functions.tooling.validation import derive_crds, validate_object

    (xrd,) = load_documents(REPO / "xrds" / "dynamographdeployments.yaml")
    crd = next(c for c in derive_crds(xrd) if c["spec"]["names"]["kind"] == "DynamoGraphDeployment")

    def service(**fields: Any) -> Obj:
        return {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
                "metadata": {"name": "g", "namespace": "demo"},
                "spec": {"services": {"w": {"componentType": "worker", **fields}}}}  # fmt: skip

    inter = {"gpuMemoryService": {"enabled": True, "mode": "interPod"}}
    old = service(**inter, failover={"enabled": True, "mode": "interPod", "numShadows": 1})
    more_shadows = service(**inter, failover={"enabled": True, "mode": "interPod", "numShadows": 2})
    message = "cannot be toggled after creation, nor its numShadows changed"
    assert any(message in v.message for v in validate_object(more_shadows, crd, old=old))
    assert validate_object(old, crd, old=old) == []
    intra = service(gpuMemoryService={"enabled": True})
    assert validate_object(service(), crd, old=intra) == [], "the intra-pod service may come and go"


@pytest.mark.parametrize(
    ("failover", "nodes", "names"),
    [
        (None, None, ["vllmworker-gpu-rank-0"]),
        ({"mode": "InterPod", "numShadows": 1}, None, ["vllmworker-gpu-rank-0"]),
        ({"mode": "InterPod", "numShadows": 1}, 2, ["vllmworker-gpu-rank-0", "vllmworker-gpu-rank-1"]),
    ],
)
def test_each_claim_template_writes_its_metadata_as_go_does(
    failover: Obj | None, nodes: int | None, names: list[str]
) -> None:
    """Grove's ``ResourceClaimTemplateSpec`` embeds ``ObjectMeta`` by value: the operator's PodCliqueSet stores it as
    ``{}`` (functions.kube.go_written)."""
    claim = inter_pod(failover)
    if nodes:
        claim["spec"]["components"][0]["multinode"] = {"nodeCount": nodes}
    (pcs,) = of_kind(run(claim).composed, "PodCliqueSet")
    templates = pcs["spec"]["template"]["resourceClaimTemplates"]
    assert [(t["name"], t["templateSpec"]["metadata"]) for t in templates] == [(n, {}) for n in names]


def test_a_multinode_inter_pod_component_has_a_server_and_engines_per_rank() -> None:
    from fixtures.rendering import check_resource

    claim = inter_pod({"mode": "InterPod", "numShadows": 1})
    claim["spec"]["components"][0]["multinode"] = {"nodeCount": 2}
    claim["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["args"] = [
        "--model", "m", "--tensor-parallel-size", "4"]  # fmt: skip
    (pcs,) = of_kind(run(claim).composed, "PodCliqueSet")
    check_resource(pcs)
    template = pcs["spec"]["template"]
    assert [t["name"] for t in template["resourceClaimTemplates"]] == ["vllmworker-gpu-rank-0", "vllmworker-gpu-rank-1"]
    (group,) = template["podCliqueScalingGroups"]
    assert group["cliqueNames"] == ["vllmworker-gms-0", "vllmworker-ldr", "vllmworker-gms-1", "vllmworker-wkr-1"]
    assert [s["filter"]["childCliqueNames"] for s in group["resourceSharing"]] == [
        ["vllmworker-gms-0", "vllmworker-ldr"], ["vllmworker-gms-1", "vllmworker-wkr-1"]]  # fmt: skip
    cliques = {c["name"]: c for c in template["cliques"]}
    leader, worker = cliques["vllmworker-ldr"], cliques["vllmworker-wkr-1"]
    assert (leader["spec"]["replicas"], leader["spec"]["minAvailable"]) == (2, 1), "a primary and a shadow per rank"
    assert worker["spec"]["startsAfter"] == ["vllmworker-gms-1"]
    leader_args, worker_args = (c["spec"]["podSpec"]["containers"][0]["args"] for c in (leader, worker))
    host = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-vllmworker-ldr-$(GROVE_PCLQ_POD_INDEX).$(GROVE_HEADLESS_SERVICE)"
    assert leader_args[leader_args.index("--master-addr") + 1] == host, "the leader engine of the same index"
    assert worker_args[worker_args.index("--node-rank") + 1] == "1", "the literal rank"
    mounts = [c["spec"]["podSpec"]["containers"][0]["volumeMounts"][-1]["subPathExpr"] for c in (leader, worker)]
    assert mounts == ["$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)/rank-0", "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)/rank-1"]
    server = cliques["vllmworker-gms-1"]["spec"]["podSpec"]["containers"][0]
    assert server["command"] == ["bash", "-c"] and "--node-rank" not in " ".join(server["args"])


def test_without_failover_a_multinode_rank_needs_its_engine() -> None:
    claim = inter_pod()
    claim["spec"]["components"][0]["multinode"] = {"nodeCount": 2}
    (pcs,) = of_kind(run(claim).composed, "PodCliqueSet")
    cliques = {c["name"]: c for c in pcs["spec"]["template"]["cliques"]}
    assert (cliques["vllmworker-wkr-1"]["spec"]["replicas"], cliques["vllmworker-wkr-1"]["spec"]["minAvailable"]) == (
        1,
        1,
    )
    assert "restartPolicy" not in cliques["vllmworker-wkr-1"]["spec"]["podSpec"] or (
        cliques["vllmworker-wkr-1"]["spec"]["podSpec"]["restartPolicy"] != "Never"
    )

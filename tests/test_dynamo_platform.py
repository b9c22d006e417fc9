"""DynamoPlatform: what each cloud composes, the stages it composes them in, its status, its refusals.

Each stage is played as a provider would: a managed resource becomes Ready, the credential resource writes the
kubeconfig Secret, a Release is deployed. The render is one reconcile (``converge=False``), as in a cluster.
"""

from __future__ import annotations

import base64
import copy
import re
from pathlib import Path
from typing import Any

import pytest

from fixtures.platform import EXAMPLES, REFUSALS, claim, edited, kubeconfig
from fixtures.tooling import REPO, crank_render_objects
from functions.api.operator_config import OperatorConfig
from functions.tooling.manifests import dump_documents, find_composition, load_documents
from functions.tooling.pipeline import RenderError, render
from functions.tooling.render import Refused, admitted_xr

Obj = dict[str, Any]
COMPOSITIONS = load_documents(REPO / "compositions")
RESOURCE_NAME = "crossplane.io/composition-resource-name"
KUBECONFIG = kubeconfig("https://ABCD.gr7.us-east-1.eks.amazonaws.com")


def run(doc: Obj, observed: list[Obj] | None = None, required: list[Obj] | None = None) -> Any:
    xr = admitted_xr(copy.deepcopy(doc), "platform", "Strict")
    return render(xr, find_composition(xr, COMPOSITIONS), observed or [], required or [], converge=False)


def by_key(out: Any) -> dict[str, Obj]:
    return {o["metadata"]["annotations"][RESOURCE_NAME]: o for o in out.composed}


def keys(out: Any) -> list[str]:
    return [o["metadata"]["annotations"][RESOURCE_NAME] for o in out.composed]


def ready(obj: Obj, **at_provider: Any) -> Obj:
    """``obj`` as its provider reports it once done."""
    obj = copy.deepcopy(obj)
    obj["status"] = {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]}
    if at_provider:
        obj["status"]["atProvider"] = at_provider
    return obj


def kubeconfig_secret(name: str, key: str = "kubeconfig") -> Obj:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": "platform"},
            "data": {key: base64.b64encode(KUBECONFIG.encode()).decode()}}  # fmt: skip


def conditions(out: Any) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c.get("message", "")) for c in out.composite["status"]["conditions"]}


# --- what each cloud composes ----------------------------------------------------------------------------------


# The EnvironmentConfig comes first of all: it holds the platform's name and publishes its tenancy (not ready yet).
CONTROL_PLANES = {
    "aws": ["cluster", "environmentconfig", "role-cluster", "role-cluster-amazoneksclusterpolicy", "role-node",
            "role-node-amazonec2containerregistryreadonly", "role-node-amazoneks-cni-policy",
            "role-node-amazoneksworkernodepolicy"],
    "azure": ["cluster", "environmentconfig", "resourcegroup"],
    "gcp": ["cluster", "environmentconfig"],
    "existing": ["environmentconfig"],
}  # fmt: skip
AFTER_CLUSTER = {
    "aws": ["clusterauth", "nodepool-h100", "nodepool-system"],
    "azure": ["nodepool-a100"],
    "gcp": ["nodepool-l4", "nodepool-system"],
    "existing": [],
}


@pytest.mark.parametrize("cloud", sorted(CONTROL_PLANES))
def test_a_new_platform_composes_its_control_plane_first(cloud: str) -> None:
    out = run(claim(cloud))
    assert keys(out) == CONTROL_PLANES[cloud]
    assert out.composite["status"]["phase"] == ("Connecting" if cloud == "existing" else "Provisioning")


def _stages(cloud: str) -> list[Any]:
    """Each reconcile's output, every stage played done by its provider, until the platform is Ready."""
    doc = claim(cloud)
    secret_name = {"existing": "gpu-lab-kubeconfig"}.get(cloud, f"{doc['metadata']['name']}-kubeconfig")
    observed: dict[str, Obj] = {}
    required: list[Obj] = []
    outs = []
    for _ in range(40):
        out = run(doc, list(observed.values()), required)
        outs.append(out)
        if out.composite["status"]["phase"] == "Ready":
            return outs
        for obj in out.composed:
            key = obj["metadata"]["annotations"][RESOURCE_NAME]
            if key not in observed:
                observed[key] = ready(obj, state="deployed") if obj["kind"] == "Release" else ready(obj)
                break  # one at a time: the order is what is under test
        else:
            required = [kubeconfig_secret(secret_name)]
    raise AssertionError(f"{cloud}: never Ready; last status {outs[-1].composite['status']}")


@pytest.mark.parametrize("cloud", sorted(CONTROL_PLANES))
def test_a_platform_composes_stage_after_stage_until_ready(cloud: str) -> None:
    outs = _stages(cloud)
    groups: list[list[str]] = []
    seen: set[str] = set()
    for out in outs:
        new = [k for k in keys(out) if k not in seen]
        seen.update(new)
        if new:
            groups.append(new)
    releases = [g for g in groups if g[0].startswith("release-")]
    assert all(len(g) == 1 for g in releases), "one release at a time"
    expected = [CONTROL_PLANES[cloud], AFTER_CLUSTER[cloud], ["providerconfig-helm", "providerconfig-kubernetes"],
                *releases]  # fmt: skip
    assert groups == [g for g in expected if g]
    records = [by_key(out)["environmentconfig"]["data"]["cluster"]["ready"] for out in outs]
    assert records == [False] * (len(outs) - 1) + [True], "the record says ready once every release is"
    last = outs[-1]
    assert last.composite["status"]["phase"] == "Ready"
    assert all(s == "True" for s, _ in conditions(last).values()), conditions(last)
    status = last.composite["status"]
    assert status["cluster"]["endpoint"] == "https://ABCD.gr7.us-east-1.eks.amazonaws.com"  # from the kubeconfig
    assert all(p["ready"] and p["state"] == "deployed" for p in status["prerequisites"])
    assert status["environmentConfig"] == f"dynamo-platform-{claim(cloud)['metadata']['name']}"


def test_each_release_waits_for_the_one_before_it() -> None:
    outs = _stages("existing")
    composed_releases = [[k for k in keys(out) if k.startswith("release-")] for out in outs]
    grown = [r for r in composed_releases if r]
    assert [len(r) for r in grown] == sorted(len(r) for r in grown)
    assert grown[0] == ["release-kai"], "the scheduler goes first: Grove's pods are gang-scheduled by it"
    assert grown[-1] == ["release-grove", "release-kai", "release-nats", "release-nginx", "release-snapshot"]


def test_a_release_not_ready_holds_the_rest_back_and_the_status_says_which() -> None:
    doc = claim("existing")
    required = [kubeconfig_secret("gpu-lab-kubeconfig")]
    observed = [ready(o) for o in run(doc, [], required).composed]  # the provider configs
    kai = next(o for o in run(doc, observed, required).composed if o["kind"] == "Release")
    observed.append({**kai, "status": {"atProvider": {"state": "pending-install"}, "conditions": [
        {"type": "Ready", "status": "False", "reason": "Creating"}]}})  # fmt: skip
    out = run(doc, observed, required)
    assert [k for k in keys(out) if k.startswith("release-")] == ["release-kai"]
    kai_status = next(p for p in out.composite["status"]["prerequisites"] if p["name"] == "kai")
    assert kai_status == {"name": "kai", "chart": "kai-scheduler", "version": kai_status["version"], "ready": False,
                          "state": "pending-install"}  # fmt: skip
    assert conditions(out)["PrerequisitesReady"] == ("False", "waiting for kai, grove, nginx, snapshot, nats")
    assert out.composite["status"]["phase"] == "Installing"


def test_an_existing_cluster_waits_for_its_kubeconfig_secret_and_says_so() -> None:
    out = run(claim("existing"))
    assert keys(out) == ["environmentconfig"]
    assert conditions(out)["ClusterReady"] == ("False", "waiting for Secret gpu-lab-kubeconfig to hold key kubeconfig")
    wrong_key = run(claim("existing"), [], [kubeconfig_secret("gpu-lab-kubeconfig", "config")])
    assert keys(wrong_key) == ["environmentconfig"], "a Secret without the key is not a kubeconfig"


# --- the composed objects --------------------------------------------------------------------------------------


def _preview(cloud: str) -> dict[str, Obj]:
    xr = admitted_xr(claim(cloud), "platform", "Strict")
    out = render(xr, find_composition(xr, COMPOSITIONS))
    return {o["metadata"]["annotations"][RESOURCE_NAME]: o for o in out.composed}


def test_eks_node_groups_take_the_pools_machine_taints_and_an_nvidia_ami() -> None:
    objs = _preview("aws")
    gpu = objs["nodepool-h100"]["spec"]
    assert gpu["forProvider"]["instanceTypes"] == ["p5.48xlarge"]
    assert gpu["forProvider"]["amiType"] == "AL2023_x86_64_NVIDIA"
    assert gpu["forProvider"]["taint"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    assert gpu["forProvider"]["scalingConfig"] == {"minSize": 0, "maxSize": 4}
    assert gpu["initProvider"] == {"scalingConfig": {"desiredSize": 1}}, "the autoscaler owns the size afterwards"
    assert objs["nodepool-system"]["spec"]["forProvider"]["amiType"] == "AL2023_x86_64_STANDARD"
    auth = objs["clusterauth"]["spec"]
    assert auth["writeConnectionSecretToRef"] == {"name": "gpu-east-kubeconfig"}
    assert auth["providerConfigRef"] == {"kind": "ClusterProviderConfig", "name": "default"}


def test_gke_pools_attach_their_accelerators_and_the_identity_reaches_helm_and_kubernetes() -> None:
    objs = _preview("gcp")
    node_config = objs["nodepool-l4"]["spec"]["forProvider"]["nodeConfig"][0]
    assert node_config["guestAccelerator"] == [
        {"type": "nvidia-l4", "count": 2, "gpuDriverInstallationConfig": [{"gpuDriverVersion": "LATEST"}]}
    ]
    assert node_config["spot"] is True
    cluster = objs["cluster"]
    assert "namespace" not in cluster["metadata"], "v1.14.0's kinds are cluster-scoped"
    assert cluster["spec"]["writeConnectionSecretToRef"] == {"name": "gpu-europe-kubeconfig", "namespace": "platform"}
    for key in ("providerconfig-helm", "providerconfig-kubernetes"):
        assert objs[key]["spec"]["identity"]["secretRef"] == {
            "name": "gke-sa-key", "namespace": "platform", "key": "credentials.json"}  # fmt: skip


def test_aks_gpu_pools_are_named_by_their_pool_name_and_install_the_driver() -> None:
    objs = _preview("azure")
    pool = objs["nodepool-a100"]
    assert pool["metadata"]["annotations"]["crossplane.io/external-name"] == "a100"
    assert pool["spec"]["forProvider"]["nodeTaints"] == ["nvidia.com/gpu=present:NoSchedule"]
    assert pool["spec"]["forProvider"]["gpuDriver"] == "Install"
    assert objs["cluster"]["spec"]["forProvider"]["defaultNodePool"]["vmSize"] == "Standard_D8s_v5"
    istio = [objs[k] for k in ("release-istio-base", "release-istiod")]
    assert [r["spec"]["forProvider"]["chart"]["name"] for r in istio] == ["base", "istiod"], "Istio's CRDs first"
    assert {r["spec"]["forProvider"]["namespace"] for r in istio} == {"istio-system"}


def test_the_environment_config_is_a_platform_config_for_what_was_installed() -> None:
    data = _preview("gcp")["environmentconfig"]["data"]
    config = OperatorConfig.model_validate(data)
    assert config.lws_enabled and not config.kai_enabled and config.orchestrators.volcanoScheduler.enabled
    assert config.infrastructure.natsAddress == "nats://nats.dynamo-system.svc.cluster.local:4222"
    assert data["cluster"] == {"platform": "gpu-europe", "namespace": "platform", "cloud": "gcp",
                               "region": "europe-west4", "ready": True}  # fmt: skip
    assert data["tenants"] == {"namespaces": ["platform"]}, "by default, graphs of its own namespace only"
    azure = OperatorConfig.model_validate(_preview("azure")["environmentconfig"]["data"])
    assert azure.ingress.virtualServiceGateway == "istio-system/dynamo-gateway", "spec.config is written over it"
    assert OperatorConfig.model_validate(_preview("existing")["environmentconfig"]["data"]).checkpoint.enabled


def test_releases_name_their_helm_release_and_reach_the_cluster_through_the_platforms_provider_config() -> None:
    objs = _preview("aws")
    nats = objs["release-nats"]
    assert nats["metadata"]["annotations"]["crossplane.io/external-name"] == "nats"
    assert nats["spec"]["providerConfigRef"] == {"kind": "ProviderConfig", "name": "gpu-east"}
    assert nats["spec"]["forProvider"]["values"]["config"]["jetstream"]["enabled"] is True
    kubernetes = objs["providerconfig-kubernetes"]
    assert (kubernetes["kind"], kubernetes["metadata"]["name"]) == ("ClusterProviderConfig", "dynamo-platform-gpu-east")
    assert kubernetes["spec"]["credentials"]["secretRef"] == {
        "name": "gpu-east-kubeconfig", "namespace": "platform", "key": "kubeconfig"}  # fmt: skip


# --- refusals --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "spec", "message"), REFUSALS, ids=[m for _, _, m in REFUSALS])
def test_a_bad_platform_is_refused_naming_the_field(name: str, spec: dict[str, Any], message: str) -> None:
    with pytest.raises(Refused, match=re.escape(message)):
        run(edited(name, **spec))


def test_the_step_refuses_what_the_xrd_would_for_an_xr_that_skipped_it() -> None:
    xr = admitted_xr(claim("existing"), "platform", "Strict")
    xr["spec"]["gpuNodePools"] = [{"name": "h100", "machineType": "p5.48xlarge"}]
    with pytest.raises(RenderError, match=r"spec.gpuNodePools: an existing cluster is not provisioned"):
        render(xr, find_composition(xr, COMPOSITIONS), converge=False)


def test_spec_config_must_be_a_platform_configuration() -> None:
    xr = admitted_xr(edited("existing", config={"discovery": {"backend": "zookeeper"}}), "platform", "Strict")
    with pytest.raises(RenderError, match=r"spec.config: not a platform configuration"):
        render(xr, find_composition(xr, COMPOSITIONS), converge=False)


def test_every_example_is_covered() -> None:
    assert sorted(p.stem for p in EXAMPLES.glob("*.yaml") if p.stem != "vllm-agg-placed") == sorted(CONTROL_PLANES)


# --- the real crossplane render --------------------------------------------------------------------------------


@pytest.mark.parametrize("cloud", sorted(CONTROL_PLANES))
def test_crank_renders_a_platform_as_the_in_process_pipeline_does(
    cloud: str, functions_file: Path, tmp_path: Path
) -> None:
    """One reconcile each, with the kubeconfig Secret present (so an existing cluster gets its provider configs)."""
    xr = admitted_xr(claim(cloud), "platform", "Strict")
    composition = find_composition(xr, COMPOSITIONS)
    secret_name = "gpu-lab-kubeconfig" if cloud == "existing" else f"{claim(cloud)['metadata']['name']}-kubeconfig"
    required = [kubeconfig_secret(secret_name)]
    theirs = crank_render_objects(tmp_path, functions_file, xr, composition, required)
    out = render(xr, composition, required=required, converge=False)
    assert dump_documents([out.composite, *out.composed]) == theirs


@pytest.mark.parametrize("unready", ["cluster", "release-kai"])
def test_a_stage_turning_unready_holds_the_platform_back_and_deletes_nothing(unready: str) -> None:
    doc = claim("aws")
    last = _stages("aws")[-1]
    observed = {k: ready(o, state="deployed") if o["kind"] == "Release" else ready(o) for k, o in by_key(last).items()}
    observed[unready]["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "Unavailable"}]
    out = run(doc, list(observed.values()), [kubeconfig_secret("gpu-east-kubeconfig")])
    assert keys(out) == keys(last), "nothing composed is dropped (Crossplane would delete it)"
    assert out.composite["status"]["phase"] == ("Provisioning" if unready == "cluster" else "Installing")
    ready_condition = next(c for c in out.composite["status"]["conditions"] if c["type"] == "Ready")
    assert ready_condition["status"] == "False"

"""The LeaderWorkerSet pathway of a multinode DCD and its status (docs/upstream/operator.md §1.2, §1.4, §2.4, §3.2,
§3.3).

Components are built from v1alpha1 service dicts (and one v1beta1 component) straight through the API models, so
these tests do not depend on the DCD step accepting ``spec.multinode``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import kubernetes_validate
import pytest

from fixtures.tooling import require_crds
from functions.api import v1alpha1, v1beta1
from functions.api.from_v1alpha1 import component_from_service
from functions.api.from_v1beta1 import component_from_v1beta1
from functions.api.graph import MAIN_CONTAINER, Component, Graph, SpecError
from functions.api.operator_config import OperatorConfig
from functions.kube import backends
from functions.kube.labels import BASE_MODEL_HASH, RESTART_AT, SELECTOR, model_hash
from functions.kube.lws import (
    LWS_API_VERSION,
    LWS_KIND,
    LWS_RESOURCE,
    ROLE_LABEL,
    lws_name,
    render_leaderworkersets,
)
from functions.kube.podspec import PodContext
from functions.readiness.lws import (
    LEADER_WORKER_SET,
    leaderworkerset_readiness,
    lws_readiness,
    lws_replica_status,
)
from functions.readiness.verdicts import NOT_FOUND, READY
from functions.tooling.validation import load_crds, validate_object

NS = "team-ns"
DCD = "llm-decode"
IMAGE = "nvcr.io/nvidia/ai-dynamo/runtime:1.0.0"
LWS_LEADER = "$(LWS_LEADER_ADDRESS)"
LWS_RANK = "$(LWS_WORKER_INDEX)"
LWS_WORKER_1 = "${LWS_LEADER_ADDRESS%%.*}-1.${LWS_LEADER_ADDRESS#*.}"
MP = {"nvidia.com/vllm-distributed-executor-backend": "mp"}


def service(
    *,
    command: list[str] | None = None,
    args: list[str] | None = None,
    gpu: str | None = "4",
    nodes: int = 2,
    replicas: int = 1,
    component_type: str = "worker",
    **extra: Any,
) -> dict[str, Any]:
    main: dict[str, Any] = {"image": IMAGE}
    if command is not None:
        main["command"] = command
    if args is not None:
        main["args"] = args
    spec: dict[str, Any] = {
        "componentType": component_type,
        "replicas": replicas,
        "multinode": {"nodeCount": nodes},
        "extraPodSpec": {"mainContainer": main},
        **extra,
    }
    if gpu is not None:
        spec["resources"] = {"limits": {"gpu": gpu}}
    return spec


def vllm(*args: str, **extra: Any) -> dict[str, Any]:
    return service(command=["python3", "-m", "dynamo.vllm"], args=list(args) or ["--model", "m"], **extra)


def render_component(
    component: Component,
    *,
    backend: str | None = "vllm",
    shape: str = "v1alpha1",
    xr_labels: dict[str, Any] | None = None,
    operator_config: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    graph = Graph(name=DCD, namespace=NS, shape=shape, components=(component,), backend_framework=backend)
    main = next(c for c in component.pod_template["spec"]["containers"] if c.get("name") == MAIN_CONTAINER)
    resolved = backends.resolve_backend(component.component_type, main, backend)
    ctx = PodContext(
        graph=graph, operator_config=OperatorConfig.model_validate(operator_config or {}), backend=resolved
    )
    return render_leaderworkersets(ctx, component, DCD, xr_labels or {})


def render(spec: dict[str, Any], **kwargs: Any) -> dict[str, dict[str, Any]]:
    return render_component(component_from_service("VllmDecodeWorker", v1alpha1.Service.model_validate(spec)), **kwargs)


def lws_names(dcd: str, count: int) -> list[str]:
    """Names of several LeaderWorkerSets, for the status tests (which also read older per-replica shapes)."""
    return [f"{dcd}-{index}" for index in range(count)]


def lws0(out: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return out[LWS_RESOURCE]


def template(out: dict[str, dict[str, Any]], role: str) -> dict[str, Any]:
    return out[LWS_RESOURCE]["spec"]["leaderWorkerTemplate"][f"{role}Template"]


def main_of(out: dict[str, dict[str, Any]], role: str) -> dict[str, Any]:
    containers = template(out, role)["spec"]["containers"]
    return next(c for c in containers if c["name"] == MAIN_CONTAINER)


# --- names, metadata and spec ------------------------------------------------------------------------------------


@pytest.mark.parametrize("replicas", [0, 1, 3])
def test_one_leaderworkerset_named_dcd_dash_0_carries_every_replica(replicas: int) -> None:
    out = render(vllm(replicas=replicas))
    assert list(out) == [LWS_RESOURCE] == ["leaderworkerset-0"]  # the older shape's first resource, updated in place
    lws = out[LWS_RESOURCE]
    assert (lws["apiVersion"], lws["kind"]) == (LWS_API_VERSION, LWS_KIND)
    assert (LWS_API_VERSION, LWS_KIND) == ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")
    assert lws["metadata"]["name"] == lws_name(DCD) == f"{DCD}-0"
    assert lws["metadata"]["namespace"] == NS
    assert lws["spec"]["replicas"] == replicas
    for role in ("leader", "worker"):
        tpl = template(out, role)
        assert "instance-id" not in tpl["metadata"]["labels"]
        assert "annotations" not in tpl["metadata"]  # no Volcano group name
        assert "schedulerName" not in tpl["spec"]


@pytest.mark.parametrize("nodes", [2, 3, 5])
def test_lws_spec_follows_node_count(nodes: int) -> None:
    spec = lws0(render(vllm(nodes=nodes, replicas=2)))["spec"]
    assert spec["replicas"] == 2
    assert spec["startupPolicy"] == "LeaderCreated"
    assert set(spec) == {"replicas", "startupPolicy", "leaderWorkerTemplate"}  # LWS's webhook adds the rest
    assert set(spec["leaderWorkerTemplate"]) == {"size", "leaderTemplate", "workerTemplate"}  # no restartPolicy
    assert spec["leaderWorkerTemplate"]["size"] == nodes


def test_lws_labels_are_the_kube_labels() -> None:
    spec = vllm(
        labels={"team": "llm", "tier": "spec"},
        modelRef={"name": "Qwen/Qwen3-0.6B"},
        extraPodMetadata={"labels": {"pod": "x"}},
    )
    xr_labels = {
        "tier": "xr",
        "crossplane.io/composite": "x-abc",
        "crossplane.io/claim-name": DCD,
        "nvidia.com/dynamo-component": "from-the-dcd",
    }
    lws = lws0(render(spec, xr_labels=xr_labels))
    assert lws["metadata"]["labels"] == {
        BASE_MODEL_HASH: model_hash("Qwen/Qwen3-0.6B"),
        "nvidia.com/dynamo-component": "from-the-dcd",  # the DCD's own identity labels win (GetDCDKubeLabels)
        "nvidia.com/dynamo-namespace": f"{NS}-{DCD}",
        "pod": "x",  # the pod template's labels too, at HEAD
        "team": "llm",
        "tier": "spec",  # v1alpha1 spec.labels over the DCD's own labels
    }
    assert list(lws["metadata"]["labels"]) == sorted(lws["metadata"]["labels"])
    assert "annotations" not in lws["metadata"]


@pytest.mark.parametrize("role", ["leader", "worker"])
def test_pod_templates_role_labels_the_users_scheduler_and_no_selector(role: str) -> None:
    spec = vllm(
        labels={"team": "llm", "shared": "from-dcd"},
        extraPodMetadata={"labels": {"pod": "x", "shared": "from-pod"}, "annotations": {"a/b": "c"}},
    )
    spec["extraPodSpec"]["schedulerName"] = "my-scheduler"
    kai = {"orchestrators": {"kaiScheduler": {"enabled": True}}}
    out = render(spec, xr_labels={"crossplane.io/composite": "x"}, operator_config=kai)
    tpl = template(out, role)
    labels = tpl["metadata"]["labels"]
    assert labels[ROLE_LABEL] == role
    assert SELECTOR not in labels
    assert labels["team"] == "llm"
    assert labels["pod"] == "x"
    assert labels["shared"] == "from-pod"  # the pod template's labels win in the LWS labels, copied over the pod
    assert labels["nvidia.com/dynamo-component-type"] == "worker"
    assert labels["nvidia.com/dynamo-graph-deployment-name"] == DCD
    assert not any(k.startswith("crossplane.io/") for k in labels)
    assert list(labels) == sorted(labels)
    assert tpl["metadata"]["annotations"] == {"a/b": "c"}
    assert tpl["spec"]["schedulerName"] == "my-scheduler"  # the user's; KAI is a Grove-pathway scheduler


def test_restart_annotation_reaches_both_templates() -> None:
    out = render(vllm(annotations={RESTART_AT: "2026-01-01T00:00:00Z", "other": "x"}))
    for role in ("leader", "worker"):
        annotations = template(out, role)["metadata"]["annotations"]
        assert annotations == {RESTART_AT: "2026-01-01T00:00:00Z"}


def test_render_is_deterministic() -> None:
    spec = vllm("--tensor-parallel-size", "8", replicas=2, annotations=MP, labels={"z": "1", "a": "2"})
    first, second = render(spec), render(copy.deepcopy(spec))
    assert json.dumps(first) == json.dumps(second)


# --- render-time validation ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "backend", "field"),
    [
        pytest.param(
            service(command=["python3", "-m", "dynamo.vllm"], args=None), "vllm",
            "spec.extraPodSpec.mainContainer.args", id="no-args",
        ),
        pytest.param(
            service(command=["python3", "-m", "dynamo.vllm"], args=[]), "vllm",
            "spec.extraPodSpec.mainContainer.args", id="empty-args",
        ),
        pytest.param(
            # the EPP type's main container has no command (its image's entrypoint runs)
            service(component_type="epp", args=["--x"], gpu="1"), None,
            "spec.extraPodSpec.mainContainer.command", id="no-command",
        ),
    ],
)  # fmt: skip
def test_render_time_validation_names_the_field(spec: dict[str, Any], backend: str | None, field: str) -> None:
    with pytest.raises(SpecError) as err:
        render(spec, backend=backend)
    assert str(err.value).startswith(f"{field}: ")


def test_validation_error_paths_in_the_v1beta1_shape() -> None:
    def component(container: dict[str, Any]) -> Component:
        return component_from_v1beta1(
            v1beta1.Component.model_validate(
                {
                    "name": "VllmDecodeWorker",
                    "type": "worker",
                    "multinode": {"nodeCount": 2},
                    "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE, **container}]}},
                }
            )
        )

    with pytest.raises(SpecError, match=r"^spec\.podTemplate\.spec\.containers\[main\]\.args: "):
        render_component(component({"command": ["python3", "-m", "dynamo.vllm"]}), shape="v1beta1")
    # no GPU limit needed (upstream dropped that check after the baseline)
    ok = component({"command": ["python3", "-m", "dynamo.vllm"], "args": ["-x"]})
    assert lws0(render_component(ok, shape="v1beta1"))["spec"]["leaderWorkerTemplate"]["size"] == 2


@pytest.mark.parametrize(
    ("component_type", "sub_type"),
    [("prefill", "prefill"), ("decode", "decode"), ("worker", None)],
)
def test_a_v1beta1_lws_carries_the_sub_component_type_of_a_prefill_or_decode_component(
    component_type: str, sub_type: str | None
) -> None:
    """Upstream's ``GetDCDKubeLabels`` reads the sub-component type from the DCD's v1alpha1 form, where a v1beta1
    prefill or decode component is a worker of that sub-type."""
    component = component_from_v1beta1(
        v1beta1.Component.model_validate(
            {
                "name": "VllmWorker",
                "type": component_type,
                "multinode": {"nodeCount": 2},
                "podTemplate": {
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                "image": IMAGE,
                                "command": ["python3", "-m", "dynamo.vllm"],
                                "args": ["-x"],
                            }
                        ]
                    }
                },
            }
        )
    )
    labels = lws0(render_component(component, shape="v1beta1"))["metadata"]["labels"]
    assert labels.get("nvidia.com/dynamo-sub-component-type") == sub_type


@pytest.mark.parametrize("framework", ["vllm", "sglang"])
def test_a_multinode_worker_without_a_gpu_limit_renders(framework: str) -> None:
    spec = service(command=["python3", "-m", f"dynamo.{framework}"], args=["--model", "m"], gpu=None)
    out = render(spec, backend=framework)
    assert "limits" not in (main_of(out, "worker").get("resources") or {})


def test_a_custom_gpu_type_counts_as_a_gpu_limit() -> None:
    spec = vllm()
    spec["resources"]["limits"]["gpuType"] = "amd.com/gpu"
    limits = main_of(render(spec), "worker")["resources"]["limits"]
    assert limits == {"amd.com/gpu": "4"}


# --- backends through the LWS pathway ----------------------------------------------------------------------------


def no_grove(out: dict[str, dict[str, Any]]) -> None:
    assert "GROVE_" not in json.dumps(out)


def test_vllm_ray_through_lws() -> None:
    out = render(vllm("--tensor-parallel-size", "8"))  # 8 > 4 GPUs, no executor annotation: ray
    no_grove(out)
    leader, worker = main_of(out, "leader"), main_of(out, "worker")
    assert leader["command"] == worker["command"] == ["/bin/sh", "-c"]
    assert leader["args"] == [
        "ray start --head --port=6379 && python3 -m dynamo.vllm --tensor-parallel-size 8 "
        "--distributed-executor-backend ray"
    ]
    assert worker["args"] == [f"ray start --address={LWS_LEADER}:6379 --block"]
    assert {"livenessProbe", "readinessProbe", "startupProbe"} <= set(leader)
    assert not {"livenessProbe", "readinessProbe", "startupProbe"} & set(worker)
    assert "initContainers" not in template(out, "worker")["spec"]


def test_vllm_mp_through_lws() -> None:
    out = render(vllm("--tensor-parallel-size", "8", annotations=MP))
    no_grove(out)
    leader, worker = main_of(out, "leader"), main_of(out, "worker")
    flags = ["--distributed-executor-backend", "mp", "--nnodes", "2", "--master-addr", LWS_LEADER]
    flags += ["--master-port", "29500"]
    assert leader["command"] == worker["command"] == ["python3", "-m", "dynamo.vllm"]  # kubelet expands, no shell
    assert leader["args"] == ["--tensor-parallel-size", "8", *flags, "--node-rank", "0"]
    assert worker["args"] == ["--tensor-parallel-size", "8", *flags, "--node-rank", LWS_RANK, "--headless"]
    for main in (leader, worker):
        assert {"name": "VLLM_NIXL_SIDE_CHANNEL_HOST", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}} in (
            main["env"]
        )
    init = template(out, "worker")["spec"]["initContainers"]
    assert [c["name"] for c in init] == ["wait-for-leader-mp"]
    assert 'export LEADER_HOST="${LWS_LEADER_ADDRESS}" LEADER_PORT="29500" &&' in init[0]["command"][2]
    assert init[0]["image"] == IMAGE
    assert {v["name"] for v in template(out, "worker")["spec"]["volumes"]} == {"shared-memory", "wait-leader-script"}
    assert "initContainers" not in template(out, "leader")["spec"]


def test_sglang_through_lws() -> None:
    spec = service(command=["python3", "-m", "dynamo.sglang"], args=["--model-path", "m"], nodes=3)
    out = render(spec, backend="sglang")
    no_grove(out)
    for role, rank in (("leader", "0"), ("worker", LWS_RANK)):
        main = main_of(out, role)
        assert main["command"] == ["python3", "-m", "dynamo.sglang"]
        assert main["args"] == [
            "--model-path", "m", "--dist-init-addr", f"{LWS_LEADER}:29500", "--nnodes", "3", "--node-rank", rank,
        ]  # fmt: skip
    assert "readinessProbe" in main_of(out, "leader")
    assert "readinessProbe" not in main_of(out, "worker")


def test_trtllm_through_lws() -> None:
    spec = service(command=["python3", "-m", "dynamo.trtllm"], args=["--model-path", "m"], nodes=2, gpu="8")
    out = render(spec, backend="trtllm")
    no_grove(out)
    leader, worker = main_of(out, "leader"), main_of(out, "worker")
    assert leader["command"] == worker["command"] == ["/bin/sh", "-c"]
    script = leader["args"][0]
    assert "getent hosts" in script  # the LWS pathway waits for the workers' DNS records
    assert script.index("getent hosts") < script.index("mpirun")
    assert f"-n 16 -H {LWS_LEADER},{LWS_WORKER_1} " in script
    assert "trtllm-llmapi-launch python3 -m dynamo.trtllm --model-path m" in script
    assert "sshd -D" in worker["args"][0]
    assert worker["readinessProbe"]["tcpSocket"]["port"] == 2222
    for role in ("leader", "worker"):
        volumes = {v["name"]: v for v in template(out, role)["spec"]["volumes"]}
        assert volumes["mpi-run-ssh-secret"]["secret"]["secretName"] == "mpi-run-ssh-secret"


# --- validation against the real CRDs --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def crds() -> dict[tuple[str, str], dict[str, Any]]:
    return load_crds(require_crds("lws"))


RENDERS = {
    "vllm-ray": (vllm("--tensor-parallel-size", "8", replicas=2), "vllm"),
    "vllm-mp": (vllm("--tensor-parallel-size", "8", annotations=MP, modelRef={"name": "m"}), "vllm"),
    "vllm-dp": (vllm("--data-parallel-size", "16", annotations=MP, nodes=4), "vllm"),
    "sglang": (service(command=["python3", "-m", "dynamo.sglang"], args=["--tp", "16"], nodes=4), "sglang"),
    "trtllm": (service(command=["python3", "-m", "dynamo.trtllm"], args=["--tp", "16"], nodes=2), "trtllm"),
    "pod-metadata": (
        vllm(
            labels={"team": "a"},
            annotations={RESTART_AT: "now"},
            extraPodMetadata={"labels": {"x": "y"}, "annotations": {"p": "q"}},
        ),
        "vllm",
    ),
}


@pytest.mark.parametrize("case", sorted(RENDERS))
def test_every_rendered_object_is_valid_against_its_crd(case: str, crds: dict[tuple[str, str], dict[str, Any]]) -> None:
    spec, backend = RENDERS[case]
    out = render(spec, backend=backend)
    assert out
    for obj in out.values():
        group = obj["apiVersion"].rpartition("/")[0]
        violations = validate_object(obj, crds[(group, obj["kind"])])
        assert violations == [], "\n".join(map(str, violations))
        if obj["kind"] != LWS_KIND:
            continue
        for role in ("leader", "worker"):
            pod_template = obj["spec"]["leaderWorkerTemplate"][f"{role}Template"]
            wrapped = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"}, "template": pod_template}
            kubernetes_validate.validate(wrapped, "1.33", strict=True)


def test_the_crd_check_can_fail(crds: dict[tuple[str, str], dict[str, Any]]) -> None:
    out = render(vllm())
    lws = copy.deepcopy(out["leaderworkerset-0"])
    unknown = copy.deepcopy(lws)
    lws["spec"]["startupPolicy"] = "WhenReady"
    unknown["spec"]["leaderWorkerTemplate"]["sizee"] = 2
    crd = crds[("leaderworkerset.x-k8s.io", LWS_KIND)]
    assert "spec.startupPolicy" in {v.path for v in validate_object(lws, crd)}
    # An unknown field fails strict decoding, which the API server reports alone.
    assert [v.path for v in validate_object(unknown, crd)] == ["spec.leaderWorkerTemplate.sizee"]


# --- status --------------------------------------------------------------------------------------------------------


def lws_obj(
    name: str,
    *,
    replicas: int | None = 1,
    ready: int = 1,
    updated: int = 1,
    current: int = 1,
    available: str | None = "True",
    conditions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"leaderWorkerTemplate": {"size": 2}}
    if replicas is not None:
        spec["replicas"] = replicas
    if conditions is None:
        conditions = [] if available is None else [{"type": "Available", "status": available}]
    return {
        "apiVersion": LWS_API_VERSION,
        "kind": LWS_KIND,
        "metadata": {"name": name},
        "spec": spec,
        "status": {"replicas": current, "updatedReplicas": updated, "readyReplicas": ready, "conditions": conditions},
    }


AVAILABLE_TRUE = {"type": "Available", "status": "True"}


@pytest.mark.parametrize(
    ("obj", "ready", "reason"),
    [
        pytest.param(None, False, NOT_FOUND, id="missing"),
        pytest.param(lws_obj("a"), True, "", id="ready"),
        pytest.param(lws_obj("a", replicas=None), True, "", id="replicas-default-1-ready"),
        pytest.param(lws_obj("a", replicas=None, ready=0), False, "desired=1, ready=0", id="replicas-default-1"),
        pytest.param(lws_obj("a", ready=0), False, "desired=1, ready=0", id="not-ready-replicas"),
        pytest.param(lws_obj("a", replicas=0, ready=0, available="False"), True, "", id="zero-desired"),
        pytest.param(lws_obj("a", replicas=2, ready=1), False, "desired=2, ready=1", id="fewer-ready"),
        pytest.param(lws_obj("a", available="False"), False, "condition Available is not True", id="unavailable"),
        pytest.param(lws_obj("a", available=None), False, "condition Available is not True", id="no-condition"),
        pytest.param(
            lws_obj("a", conditions=[{"type": "Progressing", "status": "True"}, AVAILABLE_TRUE]),
            True, "", id="available-after-other",
        ),
        pytest.param(
            lws_obj("a", conditions=[{"type": "Available", "status": "False"}, AVAILABLE_TRUE]),
            False, "condition Available is not True", id="first-available-decides",
        ),
    ],
)  # fmt: skip
def test_leaderworkerset_readiness(obj: dict[str, Any] | None, ready: bool, reason: str) -> None:
    verdict = leaderworkerset_readiness(obj)
    assert (verdict.ready, verdict.reason) == (ready, reason)


def test_component_is_ready_only_when_every_lws_is() -> None:
    names = lws_names(DCD, 3)
    assert lws_readiness([lws_obj(n) for n in names], names) == READY
    assert lws_readiness([], []) == READY  # zero replicas: upstream reports all (none) ready
    verdict = lws_readiness([lws_obj(names[0]), None, lws_obj(names[2], ready=0)], names)
    assert not verdict.ready
    assert verdict.reason == f"{DCD}-1: {NOT_FOUND}; {DCD}-2: desired=1, ready=0"
    # without names, the observed object's name (or the index) identifies it
    verdict = lws_readiness([lws_obj("x-0", available="False"), None])
    assert verdict.reason == f"x-0: condition Available is not True; {LEADER_WORKER_SET} 1: {NOT_FOUND}"


def test_replica_status_sums_counts_and_sorts_names() -> None:
    names = lws_names(DCD, 11)
    objs: list[dict[str, Any] | None] = [lws_obj(n, ready=i % 2, updated=1, current=1) for i, n in enumerate(names)]
    objs[3] = None  # not created yet: counts zero
    status = lws_replica_status(objs, names)
    assert status.kind == LEADER_WORKER_SET == "LeaderWorkerSet"
    assert status.names == tuple(sorted(names))
    assert status.names[:3] == (f"{DCD}-0", f"{DCD}-1", f"{DCD}-10")  # string order, as Go's slices.Sort
    assert (status.replicas, status.updated, status.ready, status.available) == (10, 10, 4, None)
    entry = status.as_status(with_component_name=True)
    assert entry == {
        "componentKind": "LeaderWorkerSet",
        "componentName": f"{DCD}-0",
        "componentNames": sorted(names),
        "replicas": 10,
        "updatedReplicas": 10,
        "readyReplicas": 4,
    }
    assert "availableReplicas" not in entry
    assert "componentName" not in status.as_status(with_component_name=False)


def test_replica_status_of_nothing_observed() -> None:
    names = lws_names(DCD, 2)
    status = lws_replica_status([None, None], names)
    assert (status.replicas, status.updated, status.ready, status.available) == (0, 0, 0, None)
    assert status.as_status(with_component_name=False)["readyReplicas"] == 0

"""Pod defaults and their override rules (docs/upstream/operator.md §2.1-2.3), one behaviour per test."""

from __future__ import annotations

from typing import Any

import pytest

from functions.api.normalise import graph_from_xr
from functions.api.operator_config import OperatorConfig
from functions.contract import StepRequest
from functions.kinds.graph.graph_render_step import render_graph, render_graph_deployment
from functions.kube.grove import go_duration
from functions.tooling.manifests import claim_to_xr

EPP_CONFIG = {"configMapRef": {"name": "epp", "key": "cfg.yaml"}}


def render(spec: dict[str, Any], api: str = "nvidia.com/v1alpha1", **meta: Any) -> dict[str, dict[str, Any]]:
    claim = {
        "apiVersion": api,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", **meta},
        "spec": spec,
    }
    return render_graph(graph_from_xr(claim_to_xr(claim)), OperatorConfig())


def pod(out: dict[str, dict[str, Any]], clique: str) -> dict[str, Any]:
    cliques = out["podcliqueset"]["spec"]["template"]["cliques"]
    return next(c for c in cliques if c["name"] == clique)["spec"]["podSpec"]


def container(pod_spec: dict[str, Any], name: str = "main") -> dict[str, Any]:
    return next(c for c in pod_spec["containers"] if c["name"] == name)


def test_user_security_context_replaces_the_fs_group_default() -> None:
    out = render(
        {"services": {"W": {"componentType": "worker", "extraPodSpec": {"securityContext": {"runAsUser": 0}}}}}
    )
    assert pod(out, "w")["securityContext"] == {"runAsUser": 0}
    assert pod(render({"services": {"W": {"componentType": "worker"}}}), "w")["securityContext"] == {"fsGroup": 1000}


def test_shared_memory_size_and_disable() -> None:
    sized = pod(render({"services": {"W": {"sharedMemory": {"size": "16Gi"}}}}), "w")
    assert {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}} in sized["volumes"]
    assert {"name": "shared-memory", "mountPath": "/dev/shm"} in container(sized)["volumeMounts"]
    off = pod(render({"services": {"W": {"sharedMemory": {"disabled": True}}}}), "w")
    assert "volumes" not in off
    beta_off = pod(render({"components": [{"name": "W", "sharedMemorySize": "0"}]}, "nvidia.com/v1beta1"), "w")
    assert "volumes" not in beta_off


def test_a_users_own_dev_shm_mount_gives_way_to_the_shared_memory_volume() -> None:
    # recipes mount their own /dev/shm (volume "dshm"): two mounts at one path would be refused
    spec = {
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}, {"name": "shared-memory", "emptyDir": {}}],
        "mainContainer": {
            "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}, {"name": "models", "mountPath": "/models"}]
        },
    }
    worker = pod(render({"services": {"W": {"componentType": "worker", "extraPodSpec": spec}}}), "w")
    mounts = container(worker)["volumeMounts"]
    assert [m for m in mounts if m["mountPath"] == "/dev/shm"] == [{"name": "shared-memory", "mountPath": "/dev/shm"}]
    assert mounts[-1]["name"] == "shared-memory" and {"name": "models", "mountPath": "/models"} in mounts
    volumes = [v["name"] for v in worker["volumes"]]
    # upstream HEAD orders the volumes by main's mounts (a PVC for "models"), then the unmounted "dshm"
    assert volumes == ["models", "shared-memory", "dshm"]
    # with shared memory off, the user's own mount is theirs
    off = {**spec, "volumes": spec["volumes"][:1]}
    kept = pod(render({"services": {"W": {"sharedMemory": {"disabled": True}, "extraPodSpec": off}}}), "w")
    assert {"name": "dshm", "mountPath": "/dev/shm"} in container(kept)["volumeMounts"]


def test_main_container_comes_first_and_user_env_wins() -> None:
    out = render(
        {
            "envs": [{"name": "A", "value": "graph"}, {"name": "B", "value": "graph"}],
            "services": {
                "W": {
                    "componentType": "worker",
                    "envs": [{"name": "B", "value": "service"}, {"name": "DYN_SYSTEM_PORT", "value": "9999"}],
                    "extraPodSpec": {"containers": [{"name": "helper", "image": "h"}]},
                }
            },
        }
    )
    spec = pod(out, "w")
    assert [c["name"] for c in spec["containers"]] == ["main", "helper"]
    env = {e["name"]: e.get("value") for e in container(spec)["env"]}
    assert (env["A"], env["B"], env["DYN_SYSTEM_PORT"]) == ("graph", "service", "9999")
    assert container(spec)["command"] == ["/bin/sh", "-c"]


def test_frontend_sidecar_v1alpha1_and_v1beta1_render_alike() -> None:
    alpha = pod(
        render(
            {
                "services": {
                    "W": {
                        "componentType": "worker",
                        "frontendSidecar": {"image": "fe", "args": ["-m", "dynamo.frontend"]},
                    }
                }
            }
        ),
        "w",
    )
    sidecar = container(alpha, "sidecar-frontend")
    assert sidecar["image"] == "fe"
    assert sidecar["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    assert {"name": "DYN_HTTP_PORT", "value": "8000"} in sidecar["env"]
    beta = pod(
        render(
            {
                "components": [
                    {
                        "name": "W",
                        "type": "worker",
                        "frontendSidecar": "sidecar-frontend",
                        "podTemplate": {
                            "spec": {
                                "containers": [
                                    {"name": "main"},
                                    {"name": "sidecar-frontend", "image": "fe", "args": ["-m", "dynamo.frontend"]},
                                ]
                            }
                        },
                    }
                ]
            },
            "nvidia.com/v1beta1",
        ),
        "w",
    )
    assert container(beta, "sidecar-frontend") == sidecar


def test_the_frontend_sidecar_mounts_what_main_mounts_but_not_its_shared_memory() -> None:
    """Upstream HEAD's mergeFrontendSidecarDefaults: the sidecar's own mounts, then main's mounts (the user's and
    the compilation cache's, taken before shared memory and the backend's) it does not have by name."""
    components = [
        {
            "name": "W",
            "type": "worker",
            "frontendSidecar": "sidecar-frontend",
            "compilationCache": {"pvcName": "cache", "mountPath": "/cache"},
            "podTemplate": {
                "spec": {
                    "volumes": [{"name": "model-cache", "persistentVolumeClaim": {"claimName": "models"}}],
                    "containers": [
                        {"name": "main", "volumeMounts": [{"name": "model-cache", "mountPath": "/opt/models"}]},
                        {
                            "name": "sidecar-frontend",
                            "image": "fe",
                            "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
                        },
                    ],
                }
            },
        }
    ]
    spec = pod(render({"components": components}, "nvidia.com/v1beta1"), "w")
    assert container(spec, "sidecar-frontend")["volumeMounts"] == [
        {"name": "tmp", "mountPath": "/tmp"},
        {"name": "model-cache", "mountPath": "/opt/models"},
        {"name": "cache", "mountPath": "/cache"},
    ]
    assert [m["name"] for m in container(spec)["volumeMounts"]] == ["model-cache", "cache", "shared-memory"]
    # volumes follow main's mounts: the model cache before the shared memory appended after it
    assert [v["name"] for v in spec["volumes"]] == ["model-cache", "cache", "shared-memory"]


def test_a_v1alpha1_frontend_sidecar_mounts_mains_pvc() -> None:
    spec = pod(
        render(
            {
                "services": {
                    "W": {
                        "componentType": "worker",
                        "frontendSidecar": {"image": "fe"},
                        "volumeMounts": [{"name": "model-cache", "mountPoint": "/opt/models"}],
                    }
                }
            }
        ),
        "w",
    )
    assert container(spec, "sidecar-frontend")["volumeMounts"] == [{"name": "model-cache", "mountPath": "/opt/models"}]
    assert [v["name"] for v in spec["volumes"]] == ["model-cache", "shared-memory"]


def test_vllm_compilation_cache_defaults_its_path_and_sets_cache_root() -> None:
    out = render(
        {
            "services": {
                "W": {
                    "componentType": "worker",
                    "volumeMounts": [{"name": "cache", "useAsCompilationCache": True}],
                    "extraPodSpec": {"mainContainer": {"command": ["python3", "-m", "dynamo.vllm"]}},
                }
            }
        }
    )
    spec = pod(out, "w")
    main = container(spec)
    assert {"name": "cache", "mountPath": "/root/.cache/vllm"} in main["volumeMounts"]
    assert {"name": "VLLM_CACHE_ROOT", "value": "/root/.cache/vllm"} in main["env"]
    assert {"name": "cache", "persistentVolumeClaim": {"claimName": "cache"}} in spec["volumes"]


CACHE = {"name": "cache", "mountPath": "/c"}
MODELS = {"name": "models", "mountPath": "/m"}


@pytest.mark.parametrize(
    ("own", "mounts"),
    [
        ([MODELS], [MODELS, CACHE]),  # appended
        ([CACHE, MODELS], [CACHE, MODELS]),  # already there (a converted v1alpha1 graph's): kept in place, once
        ([MODELS, CACHE, CACHE], [MODELS, CACHE]),  # repeated: the first kept
    ],
)
def test_the_compilation_cache_is_mounted_once(own: list[dict[str, Any]], mounts: list[dict[str, Any]]) -> None:
    """Upstream applyCompilationCache: a main container mounting the cache PVC at its path keeps that mount."""
    main = {"name": "main", "command": ["python3", "-m", "dynamo.vllm"], "volumeMounts": own}
    component = {
        "name": "W",
        "type": "worker",
        "compilationCache": {"pvcName": "cache", "mountPath": "/c"},
        "podTemplate": {"spec": {"containers": [main]}},
    }
    spec = pod(render({"components": [component]}, api="nvidia.com/v1beta1"), "w")
    assert [m for m in container(spec)["volumeMounts"] if m in (CACHE, MODELS)] == mounts


def test_model_ref_adds_the_hash_label_and_one_headless_service_per_model() -> None:
    out = render(
        {
            "services": {
                "A": {"componentType": "worker", "modelRef": {"name": "Qwen/Qwen3-0.6B"}},
                "B": {"componentType": "worker", "modelRef": {"name": "Qwen/Qwen3-0.6B"}},
            }
        }
    )
    services = [k for k in out if k.startswith("dynamo-model-")]
    assert services == ["dynamo-model-" + out[services[0]]["spec"]["selector"]["nvidia.com/dynamo-base-model-hash"]]
    svc = out[services[0]]
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["metadata"]["annotations"]["nvidia.com/dynamo-base-model"] == "Qwen/Qwen3-0.6B"
    cliques = out["podcliqueset"]["spec"]["template"]["cliques"]
    assert all(
        c["labels"]["nvidia.com/dynamo-base-model-hash"] == svc["spec"]["selector"]["nvidia.com/dynamo-base-model-hash"]
        for c in cliques
    )


def test_an_epp_without_eppconfig_is_refused_naming_it() -> None:
    """Upstream's webhook requires an eppConfig of an EPP (at the reference commit its only launch reads the config
    file); the XRD's CEL refuses one without, and the render step refuses a graph stored before that rule."""
    claim = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"components": [{"name": "Epp", "type": "epp"}]},
    }
    response = render_graph_deployment(StepRequest(input={}, observed_composite=claim_to_xr(claim)))
    assert [(r.severity, r.message) for r in response.results] == [
        ("fatal", "spec.components[0].eppConfig: an epp component needs eppConfig")
    ]
    assert response.desired_resources == {}


def test_an_epp_runs_upstreams_go_epp_launch() -> None:
    components = [{"name": "Epp", "type": "epp", "eppConfig": {"configMapRef": {"name": "mine", "key": "cfg.yaml"}}}]
    spec = pod(render({"components": components}, "nvidia.com/v1beta1"), "epp")
    main = container(spec)
    assert "command" not in main  # empty, which Go's JSON leaves out
    assert main["args"] == [
        "--pool-name", "g-pool", "--pool-namespace", "ns", "--pool-group", "inference.networking.k8s.io",
        "-v", "4", "--zap-encoder", "json", "--grpc-port", "9002", "--grpc-health-port", "9003",
        "--config-file", "/etc/epp/epp-config-dynamo.yaml",
    ]  # upstream's EPP launch (component_epp.go)  # fmt: skip
    assert "HOME" not in {e["name"] for e in main["env"]}  # the image's
    assert main["volumeMounts"] == [
        {"name": "epp-config", "mountPath": "/etc/epp", "readOnly": True},
        {"name": "hf-cache", "mountPath": "/home/nonroot/.cache"},  # upstream's model-config cache
        {"name": "shared-memory", "mountPath": "/dev/shm"},
    ]
    config, cache = (v for v in spec["volumes"] if v["name"] in ("epp-config", "hf-cache"))
    assert config["configMap"] == {"name": "mine", "items": [{"key": "cfg.yaml", "path": "epp-config-dynamo.yaml"}]}
    assert cache == {"name": "hf-cache", "emptyDir": {}}
    assert [v["name"] for v in spec["volumes"]] == ["epp-config", "hf-cache", "shared-memory"]


def test_global_namespace_uses_dynamo() -> None:
    out = render({"services": {"W": {"componentType": "worker", "globalDynamoNamespace": True}}})
    env = {e["name"]: e.get("value") for e in container(pod(out, "w"))["env"]}
    assert env["DYN_NAMESPACE"] == "dynamo"


def test_explicit_nulls_render_as_if_absent() -> None:
    # the API server drops nulls of non-nullable fields (all of ours); a raw XR with them must not crash
    with_nulls = {
        "services": {
            "W": {
                "componentType": "worker",
                "envs": None,
                "extraPodSpec": {"containers": None, "volumes": None, "mainContainer": {"image": "x", "args": None}},
            }
        },
        "envs": None,
    }
    without = {"services": {"W": {"componentType": "worker", "extraPodSpec": {"mainContainer": {"image": "x"}}}}}
    assert render(with_nulls) == render(without)


@pytest.mark.parametrize(
    ("given", "sent"),
    [("15m", "15m0s"), ("4h", "4h0m0s"), ("90s", "1m30s"), ("1h30m", "1h30m0s"), ("0s", "0s"), ("1.5h", "1.5h")],
)
def test_the_termination_delay_is_written_as_go_writes_a_duration(given: str, sent: str) -> None:
    # upstream's controller sends metav1.Duration.String(): the stored PodCliqueSet holds that form
    assert go_duration(given) == sent


ORIGIN = {"annotations": {"nvidia.com/dynamo-operator-origin-version": "1.5.0"}}  # vLLM multinode runs mp
MULTINODE_VLLM = {
    "componentType": "worker",
    "multinode": {"nodeCount": 2},
    "resources": {"limits": {"gpu": "1"}},
    "extraPodSpec": {
        "mainContainer": {
            "image": "vllm:1.5.0",
            "command": ["python3", "-m", "dynamo.vllm"],
            "args": ["--tensor-parallel-size", "2"],
        }
    },
}


@pytest.mark.parametrize(
    ("spec", "clique", "where", "written"),
    [
        # DYN_COMPONENT of an untyped component: upstream's EnvVar leaves the empty value out
        ({"services": {"R": {}}}, "r", ("containers", "main", "env", "DYN_COMPONENT"), {"name": "DYN_COMPONENT"}),
        # a user's empty value, likewise
        (
            {"services": {"W": {"envs": [{"name": "LD_LIBRARY_PATH", "value": ""}]}}},
            "w",
            ("containers", "main", "env", "LD_LIBRARY_PATH"),
            {"name": "LD_LIBRARY_PATH"},
        ),
        # the EPP's empty command: left out, as Go's omitempty does
        (
            {"services": {"E": {"componentType": "epp", "eppConfig": EPP_CONFIG}}},
            "e",
            ("containers", "main", "command"),
            None,
        ),
        # an init container's resources: Go writes the struct, {} when nothing is set
        (
            {"services": {"W": MULTINODE_VLLM}},
            "w-wkr",
            ("initContainers", "wait-for-leader-mp", "resources"),
            {},
        ),
    ],
    ids=["empty-default-env", "empty-user-env", "empty-command", "init-container-resources"],
)
def test_clique_containers_are_written_as_upstreams_go_structs_write_them(
    spec: dict[str, Any], clique: str, where: tuple[str, ...], written: Any
) -> None:
    """What the API server stores for a PodCliqueSet is what the client sent: upstream's Go JSON."""
    kind, name, field, *item = where
    found = next(c for c in pod(render(spec, **ORIGIN), clique).get(kind) or [] if c["name"] == name)
    value = found.get(field)
    if item:
        value = next(e for e in value if e["name"] == item[0])
    assert value == written

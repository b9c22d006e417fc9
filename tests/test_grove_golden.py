"""Upstream's own expected PodCliqueSets (docs/upstream/operator.md §6, graph_test.go cases), asserted field by
field."""

from __future__ import annotations

from typing import Any

from functions.api.normalise import graph_from_xr
from functions.api.operator_config import OperatorConfig
from functions.kinds.graph.graph_render_step import render_graph
from functions.tooling.manifests import claim_to_xr

PLATFORM = OperatorConfig.model_validate(
    {"infrastructure": {"natsAddress": "nats-address", "etcdAddress": "etcd-address"}}
)


def pcs_for(spec: dict[str, Any], name: str = "test-dynamo-graph-deployment", **meta: Any) -> dict[str, Any]:
    claim = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": "test-namespace", **meta},
        "spec": spec,
    }
    return render_graph(graph_from_xr(claim_to_xr(claim)), PLATFORM)["podcliqueset"]


def clique(pcs: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in pcs["spec"]["template"]["cliques"] if c["name"] == name)


def main_of(c: dict[str, Any]) -> dict[str, Any]:
    return next(x for x in c["spec"]["podSpec"]["containers"] if x["name"] == "main")


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def worker(args: str | list[str], gpus: str, command: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    main: dict[str, Any] = {"image": "worker-image", "command": command or ["/bin/sh", "-c"]}
    main["args"] = [args] if isinstance(args, str) else args
    return {
        "componentType": "worker",
        "resources": {"limits": {"gpu": gpus}},
        "extraPodSpec": {"mainContainer": main},
        **extra,
    }


def test_single_node_frontend_and_planner() -> None:
    pcs = pcs_for(
        {
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "subComponentType": "test-sub-component",
                    "replicas": 1,
                    "resources": {"limits": {"gpu": "1"}},
                    "extraPodMetadata": {
                        "annotations": {"nvidia.com/annotation1": "annotation1"},
                        "labels": {"nvidia.com/label1": "label1"},
                    },
                    "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}},
                    "extraPodSpec": {
                        "terminationGracePeriodSeconds": 10,
                        "mainContainer": {
                            "image": "frontend-image",
                            "command": ["/bin/sh", "-c"],
                            "args": ["echo $FOO"],
                        },
                    },
                },
                "Planner": {
                    "componentType": "planner",
                    "replicas": 2,
                    "volumeMounts": [{"name": "dynamo-pvc", "mountPoint": "/planner"}],
                    "extraPodSpec": {"mainContainer": {"image": "planner-image"}},
                },
            }
        }
    )
    assert pcs["metadata"]["name"] == "test-dynamo-graph-deployment"
    assert pcs["spec"]["replicas"] == 1
    template = pcs["spec"]["template"]
    assert template["cliqueStartupType"] == "CliqueStartupTypeAnyOrder"
    assert template["headlessServiceConfig"] == {"publishNotReadyAddresses": True}
    assert template["terminationDelay"] == "15m0s"  # Go's Duration form, as upstream's controller sends it

    frontend = clique(pcs, "frontend")
    labels = frontend["labels"]
    assert labels["nvidia.com/selector"] == "test-dynamo-graph-deployment-frontend"
    assert labels["nvidia.com/dynamo-component"] == "Frontend"
    assert labels["nvidia.com/dynamo-component-type"] == "frontend"
    assert labels["nvidia.com/dynamo-sub-component-type"] == "test-sub-component"
    assert labels["nvidia.com/metrics-enabled"] == "true"
    assert labels["nvidia.com/dynamo-namespace"] == "test-namespace-test-dynamo-graph-deployment"
    assert labels["nvidia.com/label1"] == "label1"
    assert frontend["annotations"]["nvidia.com/annotation1"] == "annotation1"
    assert (frontend["spec"]["replicas"], frontend["spec"]["minAvailable"]) == (1, 1)
    pod = frontend["spec"]["podSpec"]
    assert pod["terminationGracePeriodSeconds"] == 10
    assert pod["restartPolicy"] == "Always"
    assert pod["securityContext"] == {"fsGroup": 1000}
    assert {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}} in pod["volumes"]
    main = main_of(frontend)
    assert (main["command"], main["args"]) == (["/bin/sh", "-c"], ["echo $FOO"])
    assert main["livenessProbe"] == {"httpGet": {"path": "/health", "port": 8080}}
    assert main["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    assert main["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    env = env_of(main)
    assert env["DYN_HTTP_PORT"] == env["DYNAMO_PORT"] == "8000"
    assert (env["NATS_SERVER"], env["ETCD_ENDPOINTS"]) == ("nats-address", "etcd-address")
    assert env["DYN_NAMESPACE"] == env["DYN_NAMESPACE_PREFIX"] == "test-namespace-test-dynamo-graph-deployment"
    assert env["DYN_COMPONENT"] == "frontend"
    assert env["DYN_DISCOVERY_BACKEND"] == "kubernetes"
    assert env["POD_NAME"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert [e["name"] for e in main["env"]] == sorted(e["name"] for e in main["env"])  # MergeEnvs sorts

    planner = clique(pcs, "planner")
    assert planner["spec"]["replicas"] == 2
    pod = planner["spec"]["podSpec"]
    assert pod["serviceAccountName"] == "planner-serviceaccount"
    assert pod["terminationGracePeriodSeconds"] == 60
    assert {v["name"] for v in pod["volumes"]} == {"dynamo-pvc", "shared-memory"}
    assert {"name": "dynamo-pvc", "persistentVolumeClaim": {"claimName": "dynamo-pvc"}} in pod["volumes"]
    main = main_of(planner)
    assert {"name": "dynamo-pvc", "mountPath": "/planner"} in main["volumeMounts"]
    assert main["startupProbe"] == {
        "httpGet": {"path": "/live", "port": "system"},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 720,
    }
    assert main["ports"] == [
        {"name": "metrics", "containerPort": 9085, "protocol": "TCP"},
        {"name": "system", "containerPort": 9090, "protocol": "TCP"},
    ]
    env = env_of(main)
    assert (env["PLANNER_PROMETHEUS_PORT"], env["DYN_SYSTEM_PORT"]) == ("9085", "9090")


def test_multinode_sglang() -> None:
    pcs = pcs_for(
        {
            "services": {
                "worker": worker(
                    "python3 -m dynamo.sglang --custom-flag custom-value",
                    "2",
                    replicas=5,
                    multinode={"nodeCount": 3},
                )
            }
        }
    )
    template = pcs["spec"]["template"]
    assert template["cliqueStartupType"] == "CliqueStartupTypeAnyOrder"
    assert template["podCliqueScalingGroups"] == [
        {"name": "worker", "cliqueNames": ["worker-ldr", "worker-wkr"], "replicas": 5, "minAvailable": 1}
    ]
    leader, wkr = clique(pcs, "worker-ldr"), clique(pcs, "worker-wkr")
    assert (leader["spec"]["replicas"], leader["spec"]["minAvailable"]) == (1, 1)
    assert (wkr["spec"]["replicas"], wkr["spec"]["minAvailable"]) == (2, 2)
    assert main_of(leader)["args"] == [
        "python3 -m dynamo.sglang --dist-init-addr "
        "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-worker-ldr-0.$(GROVE_HEADLESS_SERVICE):29500 "
        "--nnodes 3 --node-rank 0 --custom-flag custom-value"
    ]
    worker_main = main_of(wkr)
    assert "--node-rank $((GROVE_PCLQ_POD_INDEX + 1))" in worker_main["args"][0]
    assert not {"livenessProbe", "readinessProbe", "startupProbe"} & set(worker_main)
    assert {"livenessProbe", "readinessProbe", "startupProbe"} <= set(main_of(leader))
    assert [p["name"] for p in worker_main["ports"]] == ["system", "nixl"]


def test_multinode_vllm_ray_without_origin_version() -> None:
    args = ["--custom-flag", "custom-value", "--tensor-parallel-size", "4", "--pipeline-parallel-size", "1"]
    pcs = pcs_for(
        {
            "services": {
                "worker": worker(args, "2", command=["python3", "-m", "dynamo.vllm"], multinode={"nodeCount": 2})
            }
        }
    )
    leader = main_of(clique(pcs, "worker-ldr"))
    assert leader["command"] == ["/bin/sh", "-c"]
    assert leader["args"] == [
        "ray start --head --port=6379 && python3 -m dynamo.vllm --custom-flag custom-value "
        "--tensor-parallel-size 4 --pipeline-parallel-size 1 --distributed-executor-backend ray"
    ]
    wkr = main_of(clique(pcs, "worker-wkr"))
    assert wkr["args"] == [
        "ray start --address=$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-worker-ldr-0.$(GROVE_HEADLESS_SERVICE):6379 --block"
    ]


def test_multinode_vllm_mp_with_origin_version() -> None:
    args = ["--tensor-parallel-size", "16"]
    pcs = pcs_for(
        {
            "services": {
                "worker": worker(args, "8", command=["python3", "-m", "dynamo.vllm"], multinode={"nodeCount": 2})
            }
        },
        annotations={"nvidia.com/dynamo-operator-origin-version": "1.0.0"},
    )
    leader = main_of(clique(pcs, "worker-ldr"))
    assert leader["args"] == [
        "--tensor-parallel-size", "16", "--distributed-executor-backend", "mp", "--nnodes", "2",
        "--master-addr", "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-worker-ldr-0.$(GROVE_HEADLESS_SERVICE)",
        "--master-port", "29500", "--node-rank", "0",
    ]  # fmt: skip
    wkr_pod = clique(pcs, "worker-wkr")["spec"]["podSpec"]
    assert [c["name"] for c in wkr_pod["initContainers"]] == ["wait-for-leader-mp"]
    assert "--node-rank $((GROVE_PCLQ_POD_INDEX + 1)) --headless" in main_of(clique(pcs, "worker-wkr"))["args"][0]


def test_topology_constraints() -> None:
    pcs = pcs_for(
        {
            "topologyConstraint": {"packDomain": "zone", "topologyProfile": "test-topology"},
            "services": {
                "Worker": {"componentType": "worker", "topologyConstraint": {"packDomain": "rack"}},
                "Multi": {
                    **worker("python3 -m dynamo.sglang", "1"),
                    "multinode": {"nodeCount": 4},
                    "topologyConstraint": {"packDomain": "block"},
                },
            },
        }
    )
    template = pcs["spec"]["template"]
    assert template["topologyConstraint"] == {"packDomain": "zone"}
    assert clique(pcs, "worker")["topologyConstraint"] == {"packDomain": "rack"}
    (group,) = template["podCliqueScalingGroups"]
    assert group["name"] == "multi"
    assert group["topologyConstraint"] == {"packDomain": "block"}
    assert "topologyConstraint" not in clique(pcs, "multi-ldr")
    assert "topologyConstraint" not in clique(pcs, "multi-wkr")


def test_trtllm_multinode_leader_starts_after_workers() -> None:
    pcs = pcs_for({"services": {"main": worker("python3 -m dynamo.trtllm", "4", multinode={"nodeCount": 2})}})
    assert pcs["spec"]["template"]["cliqueStartupType"] == "CliqueStartupTypeExplicit"
    assert clique(pcs, "main-ldr")["spec"]["startsAfter"] == ["main-wkr"]
    assert "startsAfter" not in clique(pcs, "main-wkr")["spec"]


def test_vllm_and_sglang_multinode_have_no_startup_dependencies() -> None:
    for module in ("vllm", "sglang"):
        pcs = pcs_for({"services": {"main": worker(f"python3 -m dynamo.{module}", "4", multinode={"nodeCount": 2})}})
        assert pcs["spec"]["template"]["cliqueStartupType"] == "CliqueStartupTypeAnyOrder"
        assert all("startsAfter" not in c["spec"] for c in pcs["spec"]["template"]["cliques"])


def test_long_dgd_name_is_truncated_with_a_hash_to_fit_grove() -> None:
    name = "a-very-long-dynamo-graph-deployment-name-for-grove"
    pcs = pcs_for({"services": {"VllmDecodeWorker": {"componentType": "worker"}}}, name=name)
    pcs_name = pcs["metadata"]["name"]
    assert len(pcs_name) + len("vllmdecodeworker") == 45
    assert pcs_name.startswith(name[: 45 - len("vllmdecodeworker") - 5] + "-")
    assert len(pcs_name.rsplit("-", 1)[1]) == 4

"""The upstream operator in our stack (``tests/harness/operator_stack.py``): started as its chart runs it, it composes a
graph, converts between API versions through its own webhook, and its admission webhooks answer.

The pure steps (the chart's config moved to loopback, webhook configurations pointed at a URL, CRDs as its
``crd-apply`` installs them, the manager's command from the Deployment) are table tests; the rest runs the real
operator on a control plane of its own.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from functions.tooling.manifests import load_documents
from harness.apiserver import ensure_namespace, resource_path
from harness.controlplane import APIError
from harness.operator_stack import (
    CRD_VERSION_ANNOTATION,
    NAMESPACE,
    OperatorStack,
    as_crd_apply_writes,
    loopback_config,
    manager_command,
    with_url,
)
from harness.poll import until

REPO = Path(__file__).resolve().parents[1]
Obj = dict[str, Any]

DEPLOYMENT = {
    "kind": "Deployment",
    "spec": {
        "template": {
            "spec": {
                "serviceAccountName": "dynamo-dynamo-operator-controller-manager",
                "containers": [
                    {
                        "name": "manager",
                        "args": ["--config=/etc/dynamo-operator/config.yaml", "--operator-version=1.5.0"],
                        "env": [
                            {"name": "KUBERNETES_CLUSTER_DOMAIN", "value": "cluster.local"},
                            {
                                "name": "POD_SERVICE_ACCOUNT",
                                "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}},
                            },
                            {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                        ],
                    },
                ],
            }
        }
    },
}


def test_loopback_config_moves_only_the_listeners() -> None:
    config = {
        "server": {
            "metrics": {"bindAddress": "0.0.0.0", "secure": True},
            "webhook": {"certProvisionMode": "manual", "secretName": "webhook-server-cert"},
        },
        "orchestrators": {"grove": {"enabled": True}},
    }
    got = loopback_config(config, metrics=1, health=2, webhook=3, cert_dir=Path("/certs"))
    assert got["server"] == {
        "metrics": {"bindAddress": "127.0.0.1", "secure": True, "port": 1},
        "healthProbe": {"bindAddress": "127.0.0.1", "port": 2},
        "webhook": {
            "certProvisionMode": "manual",
            "secretName": "webhook-server-cert",
            "host": "127.0.0.1",
            "port": 3,
            "certDir": "/certs",
        },
    }
    assert got["orchestrators"] == config["orchestrators"]
    assert config["server"]["metrics"]["bindAddress"] == "0.0.0.0"  # the input is not changed


def test_webhook_configurations_point_at_the_url_with_the_same_paths() -> None:
    config = {
        "kind": "ValidatingWebhookConfiguration",
        "webhooks": [
            {
                "name": "a",
                "clientConfig": {"caBundle": "Q0E=", "service": {"name": "s", "namespace": "n", "path": "/v/a"}},
            },
            {"name": "b", "clientConfig": {"url": "https://elsewhere/b"}},
        ],
    }
    got = with_url(config, "https://127.0.0.1:9443")
    assert [h["clientConfig"] for h in got["webhooks"]] == [
        {"caBundle": "Q0E=", "url": "https://127.0.0.1:9443/v/a"},
        {"url": "https://elsewhere/b"},
    ]


def test_crds_are_installed_as_crd_apply_writes_them() -> None:
    crd = {
        "metadata": {"name": "x.nvidia.com"},
        "spec": {
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {
                        "caBundle": "b2xk",
                        "service": {
                            "name": "dynamo-operator-webhook-service",
                            "namespace": "dynamo-system",
                            "path": "/convert",
                        },
                    }
                },
            }
        },
    }
    got = as_crd_apply_writes(crd, "dynamo-dynamo-operator-webhook-service", "ops", "1.5.0")
    assert got["metadata"]["annotations"] == {CRD_VERSION_ANNOTATION: "1.5.0"}
    assert got["spec"]["conversion"]["webhook"]["clientConfig"] == {
        "service": {"name": "dynamo-dynamo-operator-webhook-service", "namespace": "ops", "path": "/convert"}
    }
    plain = {"metadata": {"name": "y.nvidia.com"}, "spec": {}}
    assert as_crd_apply_writes(plain, "s", "n", "1")["spec"] == {}


def test_the_manager_runs_with_the_deployments_arguments_and_environment() -> None:
    argv, env = manager_command([copy.deepcopy(DEPLOYMENT)], Path("/bin/manager"), Path("/run/config.yaml"))
    assert argv == ["/bin/manager", "--config=/run/config.yaml", "--operator-version=1.5.0"]
    assert env == {
        "KUBERNETES_CLUSTER_DOMAIN": "cluster.local",
        "POD_SERVICE_ACCOUNT": "dynamo-dynamo-operator-controller-manager",
        "POD_NAMESPACE": NAMESPACE,
    }


# --- the real operator ------------------------------------------------------------------------------------


@pytest.fixture
def operator(upstream_operator: OperatorStack) -> OperatorStack:
    return upstream_operator


def _dgds(version: str, namespace: str, name: str = "") -> str:
    return resource_path("nvidia.com", version, "dynamographdeployments", namespace, name or None)


def test_the_operator_composes_a_graph_and_converts_it(operator: OperatorStack) -> None:
    client = operator.cp.client
    (dgd,) = load_documents(REPO / "examples" / "dgd" / "vllm-agg.yaml")
    namespace = dgd["metadata"]["namespace"]
    ensure_namespace(client, namespace)
    client.create(_dgds("v1beta1", namespace), dgd)
    name = dgd["metadata"]["name"]
    pcs = until(
        "the operator's PodCliqueSet",
        lambda: client.get(resource_path("grove.io", "v1alpha1", "podcliquesets", namespace, name)),
        seconds=120,
    )
    (owner,) = pcs["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner.get("controller")) == ("DynamoGraphDeployment", name, True)
    until(
        f"the operator's Service {name}-frontend; {operator.where()}",
        lambda: client.get(f"/api/v1/namespaces/{namespace}/services/{name}-frontend"),
    )
    # The stored v1beta1 object read as v1alpha1: only the operator's conversion webhook can answer.
    old = client.get(_dgds("v1alpha1", namespace, name))
    assert sorted(old["spec"]["services"]) == ["Frontend", "VllmWorker"], old["spec"]


def test_the_operators_webhook_refuses_what_it_refuses(operator: OperatorStack) -> None:
    client = operator.cp.client
    (dgd,) = load_documents(REPO / "examples" / "dgd" / "vllm-agg.yaml")
    dgd["metadata"]["name"] = "refused"
    # The CRD's schema allows any annotation; only the operator's validating webhook checks this one's value.
    dgd["metadata"]["annotations"] = {"nvidia.com/grove-update-strategy": "Sometimes"}
    ensure_namespace(client, dgd["metadata"]["namespace"])
    with pytest.raises(APIError) as err:
        client.create(_dgds("v1beta1", dgd["metadata"]["namespace"]), dgd, dry_run=True)
    assert "admission webhook" in str(err.value), err.value
    assert "metadata.annotations[nvidia.com/grove-update-strategy]" in str(err.value), err.value

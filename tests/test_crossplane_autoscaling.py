"""The scale subresource of a DynamoGraphDeploymentScalingAdapter on a real Crossplane (default package), driven
as upstream's users drive it: ``kubectl scale dgdsa`` (the API's ``/scale``), and a HorizontalPodAutoscaler run by
kube-controller-manager's HPA controller against an external metrics API played here
(``tests/harness/metrics_play.py``).
Each change reaches the component's replicas in the PodCliqueSet through the adapter.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

from harness.apiserver import ensure_namespace, resource_path
from harness.composites import apply_example
from harness.controller_play import clique_replicas
from harness.controlplane import APIError, ControlPlane, start_process, wait_for
from harness.crossplane_core import Crossplane
from harness.pki import issue
from harness.poll import until

HERE = Path(__file__).resolve().parent
METRICS_NAMESPACE = "metrics-play"
APISERVICE = "v1beta1.external.metrics.k8s.io"
ADAPTER_PLURAL = "dynamographdeploymentscalingadapters"


def _serve_external_metrics(cp: ControlPlane) -> Path:
    """The played external metrics API, registered with the API server; the file whose values it serves."""
    work = cp.run_dir / "metrics-play"
    work.mkdir(exist_ok=True)
    # The control plane's CA signs the player's certificate for the name the aggregator checks: the Service's
    pki = cp.run_dir / "pki"
    san = f"subjectAltName=DNS:metrics-play.{METRICS_NAMESPACE}.svc,DNS:localhost\nextendedKeyUsage=serverAuth"
    issue(pki, "metrics-play", "/CN=metrics-play", san)
    values, port_file = work / "values.json", work / "port"
    values.write_text("{}")
    start_process(cp, "metrics-play", [
        sys.executable, str(HERE / "harness" / "metrics_play.py"), "--cert", str(pki / "metrics-play.crt"),
        "--key", str(pki / "metrics-play.key"), "--values", str(values), "--port-file", str(port_file),
    ])  # fmt: skip
    wait_for(cp, "metrics-play", lambda: port_file.is_file() and port_file.read_text() != "")
    ensure_namespace(cp.client, METRICS_NAMESPACE)
    # ExternalName: the aggregator resolves the Service to localhost:<port>, no kube-proxy or endpoints needed
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "metrics-play", "namespace": METRICS_NAMESPACE},
        "spec": {"type": "ExternalName", "externalName": "localhost"},
    }
    cp.client.create(f"/api/v1/namespaces/{METRICS_NAMESPACE}/services", service)
    apiservice = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": APISERVICE},
        "spec": {
            "group": "external.metrics.k8s.io",
            "version": "v1beta1",
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
            "service": {"namespace": METRICS_NAMESPACE, "name": "metrics-play", "port": int(port_file.read_text())},
            "caBundle": base64.b64encode((pki / "ca.crt").read_bytes()).decode(),
        },
    }
    cp.client.create("/apis/apiregistration.k8s.io/v1/apiservices", apiservice)

    def available() -> bool:
        got = cp.client.get(f"/apis/apiregistration.k8s.io/v1/apiservices/{APISERVICE}")
        return any(
            c["type"] == "Available" and c["status"] == "True" for c in got.get("status", {}).get("conditions", [])
        )

    until("the external metrics APIService Available", available)
    return values


def _set_metric(values: Path, name: str, value: int) -> None:
    values.write_text(json.dumps({name: value}))


def _hpa(namespace: str, adapter: str) -> dict[str, Any]:
    immediate = {"stabilizationWindowSeconds": 0, "policies": [{"type": "Percent", "value": 1000, "periodSeconds": 1}]}
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "decode", "namespace": namespace},
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "nvidia.com/v1beta1",
                "kind": "DynamoGraphDeploymentScalingAdapter",
                "name": adapter,
            },
            "minReplicas": 1,
            "maxReplicas": 8,
            "metrics": [
                {
                    "type": "External",
                    "external": {
                        "metric": {"name": "decode_queue_depth"},
                        "target": {"type": "AverageValue", "averageValue": "10"},
                    },
                }
            ],
            "behavior": {"scaleUp": immediate, "scaleDown": immediate},
        },
    }


def test_kubectl_scale_and_an_hpa_drive_the_component_through_the_adapter(crossplane: Crossplane) -> None:
    cp = crossplane.cp
    namespace = "autoscale"
    ensure_namespace(cp.client, namespace)
    apply_example(cp, "vllm-autoscaled.yaml", namespace)
    name = "vllm-autoscaled-vllmdecodeworker"
    adapter = resource_path("nvidia.com", "v1beta1", ADAPTER_PLURAL, namespace, name)
    pcs = resource_path("grove.io", "v1alpha1", "podcliquesets", namespace, "vllm-autoscaled")
    until("the decode adapter and the PodCliqueSet", lambda: cp.client.get(adapter) and cp.client.get(pcs))

    # kubectl scale dgdsa vllm-autoscaled-vllmdecodeworker --replicas=3: a write to the scale subresource
    cp.client.merge_patch(f"{adapter}/scale", {"spec": {"replicas": 3}})
    until("decode clique at 3 (kubectl scale)", lambda: clique_replicas(cp.client.get(pcs), "vllmdecodeworker") == 3)
    scale = until("the scale subresource reporting 3", lambda: (
        s if (s := cp.client.get(f"{adapter}/scale"))["status"].get("replicas") == 3 else None))  # fmt: skip
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 3
    assert scale["status"]["selector"] == (
        "nvidia.com/dynamo-graph-deployment-name=vllm-autoscaled,nvidia.com/dynamo-component=VllmDecodeWorker"
    )

    # A HorizontalPodAutoscaler on the adapter: 60 queued requests at 10 per replica is 6 replicas, then 20 is 2.
    values = _serve_external_metrics(cp)
    _set_metric(values, "decode_queue_depth", 60)
    cp.client.create(f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers", _hpa(namespace, name))
    hpa_path = f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/decode"
    try:
        until("decode clique at 6 (the HPA)", lambda: clique_replicas(cp.client.get(pcs), "vllmdecodeworker") == 6, 120)
    except AssertionError as err:
        raise AssertionError(
            f"{err}; the HPA's status: {cp.client.get(hpa_path).get('status')}; {cp.where()}"
        ) from None
    assert cp.client.get(adapter)["spec"]["replicas"] == 6
    _set_metric(values, "decode_queue_depth", 20)
    until("decode clique at 2 (the HPA)", lambda: clique_replicas(cp.client.get(pcs), "vllmdecodeworker") == 2, 120)
    hpa = cp.client.get(f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/decode")
    able = {c["type"]: c["status"] for c in hpa["status"]["conditions"]}
    assert able["AbleToScale"] == "True" and able["ScalingActive"] == "True", hpa["status"]
    # the prefill worker's adapter was never touched
    prefill = resource_path("nvidia.com", "v1beta1", ADAPTER_PLURAL, namespace, "vllm-autoscaled-vllmprefillworker")
    assert cp.client.get(prefill)["spec"]["replicas"] == clique_replicas(cp.client.get(pcs), "vllmprefillworker")
    try:
        cp.client.delete(f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/decode")
    except APIError as err:
        if err.code != 404:
            raise

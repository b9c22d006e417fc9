"""A DynamoModel's endpoints and conditions from what is observed (docs/upstream/checkpoint-gms-dgdr-model.md §5,
docs/upstream/operator.md §4.4): the EndpointSlices of its base model's Services, the pods behind them, and for a LoRA
adapter the results its load Job reported."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from functions.contract import Condition

SYSTEM_PORT = 9090
SERVICES_FOUND = "ServicesFound"
ENDPOINTS_READY = "EndpointsReady"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-component-type"
SUB_COMPONENT_TYPE_LABEL = "nvidia.com/dynamo-sub-component-type"
GRAPH_NAME_LABEL = "nvidia.com/dynamo-graph-deployment-name"
SELECTOR_LABEL = "nvidia.com/selector"
# What a legacy vLLM prefill answers (HTTP 500) when it cannot manage LoRAs itself.
LEGACY_ERRORS = ("lora management not available", "endpoint 'load_lora' not found in local registry")


@dataclass(frozen=True)
class Candidate:
    """One pod behind the base model's Services."""

    pod: str
    address: str  # http://<ip>:9090
    kubernetes_ready: bool


@dataclass
class ModelStatus:
    endpoints: list[dict[str, Any]]
    conditions: list[Condition]
    ready: int = 0
    covered: int = 0
    serving: bool = False  # every endpoint ready or covered (LoRA), or discovered (base)
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (reason, message)

    def as_status(self) -> dict[str, Any]:
        status: dict[str, Any] = {
            "endpoints": self.endpoints,
            "readyEndpoints": self.ready,
            "totalEndpoints": len(self.endpoints),
        }
        if self.covered:
            status["loraFallbackCoveredEndpoints"] = self.covered
        return status


def candidates(slices: list[dict[str, Any]]) -> list[Candidate]:
    """Every pod-backed endpoint, ready or not, once per pod (its first address), sorted by pod name."""
    seen: dict[str, Candidate] = {}
    for slice_ in sorted(slices, key=lambda s: (s.get("metadata") or {}).get("name", "")):
        for endpoint in slice_.get("endpoints") or []:
            ref = endpoint.get("targetRef") or {}
            addresses = endpoint.get("addresses") or []
            if ref.get("kind") != "Pod" or not addresses:
                continue
            key = ref.get("uid") or ref.get("name")
            if key in seen:
                continue
            ready = (endpoint.get("conditions") or {}).get("ready")
            seen[key] = Candidate(str(ref.get("name")), f"http://{addresses[0]}:{SYSTEM_PORT}", ready is not False)
    return sorted(seen.values(), key=lambda c: c.pod)


def service_count(slices: list[dict[str, Any]]) -> int:
    return len({((s.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) for s in slices})


def load_results(pod: dict[str, Any] | None) -> dict[str, dict[str, Any]] | None:
    """address -> {code, message} from the load Job's termination message; None while it has not finished."""
    for status in ((pod or {}).get("status") or {}).get("containerStatuses") or []:
        terminated = (status.get("state") or {}).get("terminated")
        if terminated is None:
            continue
        results = {}
        for line in str(terminated.get("message") or "").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict) and item.get("address"):
                results[str(item["address"])] = item
        return results
    return None


def _prefill_group(pod: dict[str, Any]) -> str | None:
    """A vLLM prefill pod's group (its graph, else its workload); None for other pods."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    prefill = labels.get(COMPONENT_TYPE_LABEL) == "prefill" or (
        labels.get(COMPONENT_TYPE_LABEL) == "worker" and labels.get(SUB_COMPONENT_TYPE_LABEL) == "prefill"
    )
    if not prefill:
        return None
    if labels.get(GRAPH_NAME_LABEL):
        return f"graph:{labels[GRAPH_NAME_LABEL]}"
    owner = next((o for o in (pod.get("metadata") or {}).get("ownerReferences") or [] if o.get("controller")), {})
    return f"workload:{labels.get(SELECTOR_LABEL) or owner.get('name', '')}"


def _legacy(result: dict[str, Any]) -> bool:
    message = str(result.get("message") or "").lower()
    return result.get("code") == 500 and any(text in message for text in LEGACY_ERRORS)


def base_status(model: str, found: list[Candidate], services: int) -> ModelStatus:
    endpoints = [{"address": c.address, "podName": c.pod, "ready": False} for c in found]
    if not found:
        return _none_found(model)
    return ModelStatus(
        endpoints,
        [
            Condition(SERVICES_FOUND, "True", "ServicesFound", f"Found {services} service(s)"),
            Condition(ENDPOINTS_READY, "True", "EndpointsDiscovered", f"Found {len(found)} endpoint(s) for base model"),
        ],
        serving=True,
    )


def _none_found(model: str) -> ModelStatus:
    message = f"No endpoint slices found for base model {model}"
    return ModelStatus(
        [],
        [
            Condition(SERVICES_FOUND, "False", "NoServicesFound", message),
            Condition(ENDPOINTS_READY, "False", "NoEndpoints", message),
        ],
        warnings=[("NoEndpointsFound", message)],
    )


def lora_status(
    model: str,
    found: list[Candidate],
    services: int,
    results: dict[str, dict[str, Any]] | None,
    pods: dict[str, dict[str, Any]],
) -> ModelStatus:
    """Each endpoint ready when its load succeeded (2xx); a legacy prefill is covered when another prefill of its
    group loaded it and it is Kubernetes-ready."""
    if not found:
        return _none_found(model)
    results = results or {}
    loaded = {c.pod for c in found if 200 <= int((results.get(c.address) or {}).get("code") or 0) < 300}
    groups = {c.pod: _prefill_group(pods.get(c.pod) or {}) for c in found}
    capable = {groups[p] for p in loaded if groups[p]}
    endpoints, failures = [], []
    for c in found:
        result = results.get(c.address)
        entry: dict[str, Any] = {"address": c.address, "podName": c.pod, "ready": c.pod in loaded}
        if result is not None and c.pod not in loaded:
            if _legacy(result) and groups[c.pod] in capable and c.kubernetes_ready:
                entry["loraFallbackCovered"] = True
            else:
                failures.append(f"{c.pod}: load LoRA failed with status {result.get('code')}: {result.get('message')}")
        endpoints.append(entry)
    ready = len(loaded)
    covered = sum(1 for e in endpoints if e.get("loraFallbackCovered"))
    total = len(endpoints)
    services_found = Condition(SERVICES_FOUND, "True", "ServicesFound", f"Found {services} service(s)")
    warnings = [("PartialEndpointFailure", "; ".join(failures))] if failures else []
    if ready + covered == total:
        message = f"All {total} endpoint(s) are ready or covered by a capable prefill"
        ready_condition = Condition(ENDPOINTS_READY, "True", "AllEndpointsReady", message)
        return ModelStatus(endpoints, [services_found, ready_condition], ready, covered, True, warnings)
    message = f"Found {ready} ready endpoint(s) and {covered} fallback-covered endpoint(s) out of {total} total"
    warnings.append(("NotReady", message))
    ready_condition = Condition(ENDPOINTS_READY, "False", "NotReady", message)
    return ModelStatus(endpoints, [services_found, ready_condition], ready, covered, False, warnings)

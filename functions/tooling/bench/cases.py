"""What the benchmark sends: RunFunctionRequests formed as Crossplane forms them, for corpus and synthetic DGDs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from functions.api.operator_config import OPERATOR_CONFIG_REQUIREMENT
from functions.fn import run
from functions.kinds import INPUT_API_VERSION
from functions.kinds.component.webhook_rules import with_runtime_version_overrides
from functions.tooling.bench.model import (
    FLOOR_KIND,
    RENDER_KIND,
    SYNTHETIC_COMPONENTS,
    SYNTHETIC_IMAGE,
    BenchError,
    Case,
)
from functions.tooling.manifests import ManifestError, claim_to_xr
from functions.tooling.pipeline import CAPABILITIES

PLACEHOLDER_RUNTIME_VERSION = "1.0.0"


def run_function_request(xr: dict[str, Any], kind: str) -> fnv1.RunFunctionRequest:
    """The request Crossplane sends the first pipeline step for ``xr``."""
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "function-dynamo-bench"
    req.meta.capabilities.extend(CAPABILITIES)
    req.observed.composite.resource.update(xr)
    req.input.update({"apiVersion": INPUT_API_VERSION, "kind": kind})
    # The Composition's bootstrap requirement; no EnvironmentConfig matches it, so it is empty.
    req.required_resources[OPERATOR_CONFIG_REQUIREMENT].CopyFrom(fnv1.Resources())
    return req


def renders(req: fnv1.RunFunctionRequest) -> bool:
    """The request renders composed resources without a Fatal result."""
    rsp = run(req)
    return bool(rsp.desired.resources) and not any(r.severity == fnv1.SEVERITY_FATAL for r in rsp.results)


def make_case(name: str, source: str, xr: dict[str, Any]) -> Case:
    return Case(
        name=name,
        source=source,
        render=run_function_request(xr, RENDER_KIND).SerializeToString(deterministic=True),
        floor=run_function_request(xr, FLOOR_KIND).SerializeToString(deterministic=True),
    )


def corpus_dgds(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """(file#index, document) for every DynamoGraphDeployment in the corpus."""
    if not root.is_dir():
        raise BenchError(
            f"corpus not found at {root}: pass --corpus DIR, the upstream Dynamo example manifests "
            "(shared/corpus beside the checkout)"
        )
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out = []
    for path in sorted(root.rglob("*.yaml")):
        try:
            docs = [d for d in yaml.load_all(path.read_text(encoding="utf-8"), Loader=loader) if d]
        except yaml.YAMLError:
            continue
        for i, doc in enumerate(docs):
            if is_dgd(doc):
                out.append((f"{path.relative_to(root)}#{i}", doc))
    return out


def is_dgd(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and doc.get("kind") == "DynamoGraphDeployment"
        and str(doc.get("apiVersion", "")).startswith("nvidia.com/")
    )


def rendering_cases(root: Path) -> list[Case]:
    """A case for every corpus DGD that renders, ordered by request size (then source). A DGD is taken as its user
    feeds it once upstream's webhook is followed: with ``runtimeVersionOverride`` where its images carry placeholder
    tags (1.0.0: below 1.5.0 it changes nothing rendered)."""
    cases = []
    for source, doc in corpus_dgds(root):
        try:
            xr = claim_to_xr(with_runtime_version_overrides(doc, PLACEHOLDER_RUNTIME_VERSION))
        except ManifestError:
            continue
        if renders(run_function_request(xr, RENDER_KIND)):
            cases.append(make_case(source, source, xr))
    if not cases:
        raise BenchError(f"no DynamoGraphDeployment in {root} renders without a Fatal result")
    return sorted(cases, key=lambda c: (len(c.render), c.source))


def corpus_cases(root: Path) -> list[Case]:
    """The smallest, the median and the largest rendering corpus DGD by serialized request size."""
    ordered = rendering_cases(root)
    picks = {"smallest": ordered[0], "typical": ordered[(len(ordered) - 1) // 2], "largest": ordered[-1]}
    return [replace(case, name=name) for name, case in picks.items()]


def synthetic_component(index: int) -> dict[str, Any]:
    """A disaggregated vLLM worker, as the corpus writes them, alternating prefill and decode."""
    role = ("prefill", "decode")[index % 2]
    main = {
        "name": "main",
        "image": SYNTHETIC_IMAGE,
        "command": ["python3", "-m", "dynamo.vllm"],
        "args": ["--model", "Qwen/Qwen3-0.6B", "--disaggregation-mode", role, "--tensor-parallel-size", "1"],
        "env": [{"name": "DYN_LOG", "value": "info"}, {"name": "WORKER_INDEX", "value": str(index)}],
        "envFrom": [{"secretRef": {"name": "hf-token-secret"}}],
        "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "4", "memory": "16Gi"}},
        "workingDir": "/workspace/examples/backends/vllm",
    }
    return {
        "name": f"{role}{index:02d}",
        "type": role,
        "replicas": 1 + index % 3,
        "podTemplate": {"spec": {"containers": [main]}},
    }


def synthetic_dgd(components: int = SYNTHETIC_COMPONENTS) -> dict[str, Any]:
    """A v1beta1 DGD with a frontend and ``components - 1`` workers (25 is the API's maximum)."""
    frontend = {
        "name": "Frontend",
        "type": "frontend",
        "replicas": 2,
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": SYNTHETIC_IMAGE}]}},
    }
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "bench-synthetic", "namespace": "bench"},
        "spec": {
            "backendFramework": "vllm",
            "env": [{"name": "DYN_NAMESPACE_PREFIX", "value": "bench"}],
            "components": [frontend, *(synthetic_component(i) for i in range(components - 1))],
        },
    }


def synthetic_case(grove: bool = True) -> Case:
    """The synthetic DGD; with ``grove=False`` on the component pathway (one nested DCD per component)."""
    claim = synthetic_dgd()
    name, source = f"synthetic-{SYNTHETIC_COMPONENTS}", f"synthetic, {SYNTHETIC_COMPONENTS} components"
    if not grove:
        claim["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}
        name, source = f"{name}-no-grove", f"{source}, component pathway"
    xr = claim_to_xr(claim)
    if not renders(run_function_request(xr, RENDER_KIND)):
        raise BenchError("the synthetic DGD does not render (a bug in the benchmark or in the render)")
    return make_case(name, source, xr)


def all_cases(corpus: Path) -> list[Case]:
    return [*corpus_cases(corpus), synthetic_case(), synthetic_case(grove=False)]

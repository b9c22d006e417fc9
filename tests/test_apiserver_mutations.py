"""Nothing crashes, whatever the input: corpus DGDs with each field set to null, a wrong type or empty.

Every mutation goes where a user's manifest goes: the preview (``function-dynamo render``'s admission)
and the real API server, which must agree on refusing it, the preview naming the fields; what the API
server stores becomes the XR Crossplane would create, and the function, over gRPC, answers it with a
render or a Fatal result whose message starts with a field path. Internal errors: zero.

"Each field" is each field position the corpus uses (``spec.services.*.resources.limits.gpu``, list
indices and service names generalised), mutated in the first two corpus documents that have it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from fixtures.mutations import NAMESPACE, mutations
from functions.tooling.admit_manifest import admit_manifest
from functions.tooling.manifests import claim_to_xr
from harness.apiserver import Installed, ensure_namespace, resource_path
from harness.controlplane import APIError, ControlPlane
from harness.server import serving

FIELD_PATH = re.compile(r"^(?:spec|metadata)(?:[.\[:]|$)")
INPUT = {"apiVersion": "dynamo.fn.crossplane.io/v1beta1", "kind": "GraphDeployment"}


@pytest.fixture(scope="module")
def stub() -> Iterator[grpcv1.FunctionRunnerServiceStub]:
    import grpc

    with serving("--insecure") as address, grpc.insecure_channel(address) as channel:
        yield grpcv1.FunctionRunnerServiceStub(channel)


def _run(stub: grpcv1.FunctionRunnerServiceStub, xr: dict[str, Any]) -> fnv1.RunFunctionResponse:
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "mutations"
    req.observed.composite.resource.update(xr)
    req.input.update(INPUT)
    return stub.RunFunction(req, timeout=30)


def test_every_mutation_is_refused_naming_a_field_or_rendered_or_a_fatal_naming_a_field(
    control_plane: ControlPlane, installed: dict[str, Installed], stub: grpcv1.FunctionRunnerServiceStub
) -> None:
    cases = mutations()
    if not cases:
        pytest.skip("no corpus DGDs: ../shared/corpus must be laid beside the checkout")
    assert all(i.accepted for i in installed.values()), installed
    client = control_plane.client
    ensure_namespace(client, NAMESPACE)
    problems: list[str] = []
    stats: Counter[str] = Counter()
    for where, obj in cases:
        preview = admit_manifest(obj)
        version = obj["apiVersion"].split("/")[1]
        path = resource_path("nvidia.com", version, "dynamographdeployments", NAMESPACE)
        try:
            stored = client.request("POST", path, obj, params={"dryRun": "All", "fieldValidation": "Strict"})
        except APIError as err:
            if err.code >= 500:
                raise
            stored = None
        if (stored is None) != (preview.object is None):
            problems.append(f"{where}: API server {'refuses' if stored is None else 'stores'} it, the preview does not")
            continue
        if stored is None:
            stats["refused"] += 1
            unnamed = [v for v in preview.result.violations if not v.path]
            if unnamed:
                problems.append(f"{where}: refused without a field path: {unnamed}")
            continue
        rsp = _run(stub, claim_to_xr(stored))
        fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
        if any("internal error" in m for m in fatal):
            stats["internal error"] += 1
            problems.append(f"{where}: {fatal[0]}")
        elif fatal:
            stats["fatal"] += 1
            if not FIELD_PATH.match(fatal[0]):
                problems.append(f"{where}: Fatal without a field path: {fatal[0]}")
        else:
            stats["rendered"] += 1
            if not rsp.desired.resources:
                problems.append(f"{where}: neither rendered nor Fatal")
    print(f"\nmutations: {len(cases)}: {dict(sorted(stats.items()))}")
    assert not problems, f"{len(problems)} of {len(cases)} mutations:\n" + "\n".join(
        [*problems[:40], control_plane.where()]
    )
    assert stats["rendered"] >= 100 and stats["refused"] >= 100 and stats["fatal"] >= 1, stats

"""Determinism of the real gRPC server: the same request always gets byte-identical responses.

Crossplane re-runs a Composition's pipeline on every reconcile and applies what changed; a response
that drifts (ordering, hidden state, a clock, hash-seed dependent iteration) makes it patch the
composed resources for no reason. Responses are compared as ``SerializeToString(deterministic=True)``
(protobuf's canonical encoding: map entries sorted), so only real differences count.
"""

from __future__ import annotations

import copy
import random
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from google.protobuf import json_format

from fixtures.corpus import load_claim
from fixtures.tooling import REPO
from functions.tooling.manifests import claim_to_xr, load_documents
from harness.server import serving

INPUT = {"apiVersion": "dynamo.fn.crossplane.io/v1beta1", "kind": "GraphDeployment"}
XR = claim_to_xr(load_claim(REPO / "examples" / "v1alpha1" / "sglang-multinode.yaml"))
(PLATFORM,) = load_documents(REPO / "examples" / "operator-config.yaml")
DEADLINE_SECONDS = 10
SEQUENTIAL = 1000
CONCURRENT = 100


def request(xr: dict[str, Any] = XR, operator_config: dict[str, Any] = PLATFORM) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest()
    req.meta.tag = "determinism"
    req.observed.composite.resource.update(xr)
    req.input.update(INPUT)
    req.required_resources["platform"].items.add().resource.update(operator_config)
    return req


def canonical(rsp: fnv1.RunFunctionResponse) -> bytes:
    return rsp.SerializeToString(deterministic=True)


def run(stub: grpcv1.FunctionRunnerServiceStub, req: fnv1.RunFunctionRequest) -> bytes:
    return canonical(stub.RunFunction(req, timeout=DEADLINE_SECONDS))


def first_difference(a: bytes, b: bytes) -> str:
    """Where two canonical responses differ, as JSON paths (for a readable failure)."""
    da = json_format.MessageToDict(fnv1.RunFunctionResponse.FromString(a))
    db = json_format.MessageToDict(fnv1.RunFunctionResponse.FromString(b))
    found: list[str] = []

    def walk(x: Any, y: Any, path: str) -> None:
        if len(found) >= 5:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            if list(x) != list(y) and set(x) == set(y):
                found.append(f"{path}: key order {list(x)} vs {list(y)}")
            for key in sorted(set(x) | set(y)):
                walk(x.get(key), y.get(key), f"{path}.{key}")
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (p, q) in enumerate(zip(x, y, strict=True)):
                walk(p, q, f"{path}[{i}]")
        elif x != y:
            found.append(f"{path}: {str(x)[:200]!r} vs {str(y)[:200]!r}")

    walk(da, db, "")
    return "; ".join(found) or "no difference in the JSON form (an encoding difference)"


def assert_identical(reference: bytes, got: bytes, what: str) -> None:
    assert got == reference, f"{what}: {first_difference(reference, got)}"


def shuffled(node: Any, rng: random.Random) -> Any:
    """``node`` with the keys of every object in a random order (list order is meaning, so kept)."""
    if isinstance(node, dict):
        keys = list(node)
        rng.shuffle(keys)
        return {k: shuffled(node[k], rng) for k in keys}
    if isinstance(node, list):
        return [shuffled(v, rng) for v in node]
    return node


def key_orders(req: fnv1.RunFunctionRequest) -> dict[str, tuple[str, ...]]:
    """path -> key order of every object in the XR, as the server iterates them after decoding the request."""
    decoded = fnv1.RunFunctionRequest.FromString(req.SerializeToString())
    orders: dict[str, tuple[str, ...]] = {}

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            orders[path] = tuple(node)
            for key, value in node.items():
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(json_format.MessageToDict(decoded.observed.composite.resource), "")
    return orders


def wide_xr() -> dict[str, Any]:
    """The multinode example plus 23 single-node workers (25 services, the most allowed).

    protobuf (upb) decodes a map into a hash table seeded per process: a small map comes out in one
    order whatever the wire order, a map this big in about as many orders as there are shuffles.
    """
    xr = copy.deepcopy(XR)
    services = xr["spec"]["services"]
    for i in range(23):
        worker = copy.deepcopy(services["SglangWorker"])
        del worker["multinode"]
        services[f"Worker{i}"] = worker
    return xr


@pytest.fixture(scope="module")
def stub() -> Iterator[grpcv1.FunctionRunnerServiceStub]:
    with serving("--insecure") as address, grpc.insecure_channel(address) as channel:
        yield grpcv1.FunctionRunnerServiceStub(channel)


@pytest.fixture(scope="module")
def reference(stub: grpcv1.FunctionRunnerServiceStub) -> bytes:
    return run(stub, request())


def test_the_response_is_big_and_realistic(reference: bytes) -> None:
    rsp = fnv1.RunFunctionResponse.FromString(reference)
    assert [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL] == []
    assert {"podcliqueset", "wait-leader-configmap", "service-frontend"} <= set(rsp.desired.resources)
    pcs = json_format.MessageToDict(rsp.desired.resources["podcliqueset"].resource)
    assert pcs["spec"]["template"]["podCliqueScalingGroups"], "the multinode worker has a scaling group"
    assert len(reference) > 10_000, len(reference)


def test_the_comparison_can_fail(reference: bytes) -> None:
    """A changed response is caught and the difference is named."""
    rsp = fnv1.RunFunctionResponse.FromString(reference)
    rsp.desired.resources["podcliqueset"].resource["spec"]["replicas"] = 2
    with pytest.raises(AssertionError, match=r"\.spec\.replicas"):
        assert_identical(reference, canonical(rsp), "changed")
    rsp = fnv1.RunFunctionResponse.FromString(reference)
    pcs = json_format.MessageToDict(rsp.desired.resources["podcliqueset"].resource)
    pcs["spec"]["template"]["cliques"].reverse()
    rsp.desired.resources["podcliqueset"].resource.Clear()
    rsp.desired.resources["podcliqueset"].resource.update(pcs)
    with pytest.raises(AssertionError, match=r"cliques\[0\]"):
        assert_identical(reference, canonical(rsp), "reordered")


def test_sequential_repeats_are_byte_identical(stub: grpcv1.FunctionRunnerServiceStub, reference: bytes) -> None:
    req = request()
    started = time.monotonic()
    differing = [i for i in range(SEQUENTIAL) if run(stub, req) != reference]
    elapsed = time.monotonic() - started
    print(f"\ndeterminism: {SEQUENTIAL} sequential calls in {elapsed:.1f}s, {len(reference)} bytes each")
    assert differing == [], f"{len(differing)} of {SEQUENTIAL} responses differ, first at call {differing[0]}"


def test_fresh_requests_are_byte_identical(stub: grpcv1.FunctionRunnerServiceStub, reference: bytes) -> None:
    """A request rebuilt from scratch (new message objects, re-read example) gets the same bytes."""
    xr = claim_to_xr(load_claim(REPO / "examples" / "v1alpha1" / "sglang-multinode.yaml"))
    for _ in range(20):
        assert_identical(reference, run(stub, request(xr)), "rebuilt request")


def test_concurrent_calls_are_byte_identical(stub: grpcv1.FunctionRunnerServiceStub, reference: bytes) -> None:
    req = request()
    start = threading.Barrier(CONCURRENT)

    def one(_: int) -> bytes:
        start.wait(timeout=30)  # all calls in flight together
        return run(stub, req)

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=CONCURRENT) as pool:
        results = list(pool.map(one, range(CONCURRENT)))
    elapsed = time.monotonic() - started
    print(f"\ndeterminism: {CONCURRENT} concurrent calls in {elapsed:.1f}s")
    assert len(results) == CONCURRENT
    for i, got in enumerate(results):
        assert_identical(reference, got, f"concurrent call {i}")


@pytest.mark.parametrize("wide", [False, True], ids=["sglang-multinode", "wide"])
def test_input_key_order_does_not_change_the_response(
    stub: grpcv1.FunctionRunnerServiceStub, reference: bytes, wide: bool
) -> None:
    xr = wide_xr() if wide else XR
    expected = run(stub, request(xr)) if wide else reference
    rendered = fnv1.RunFunctionResponse.FromString(expected)
    assert list(rendered.results) == [] and "podcliqueset" in rendered.desired.resources, rendered.results
    seen: set[tuple[tuple[str, tuple[str, ...]], ...]] = set()
    services: set[tuple[str, ...]] = set()
    for seed in range(20):
        rng = random.Random(seed)
        req = request(shuffled(xr, rng), shuffled(PLATFORM, rng))
        orders = key_orders(req)
        seen.add(tuple(sorted(orders.items())))
        services.add(orders[".spec.services"])
        assert_identical(expected, run(stub, req), f"key order shuffled with seed {seed}")
    # The shuffles must reach the server: it iterates the decoded objects in other orders (measured with
    # this process' decoder; the server's is seeded differently but varies alike).
    assert len(seen) > 1, "the shuffles did not change the key order the server decodes"
    if wide:
        assert len(services) >= 10, f"spec.services reached the server in only {len(services)} orders"


def test_servers_with_different_hash_seeds_give_identical_bytes(reference: bytes) -> None:
    """Iterating a set or a dict keyed by hash would differ between processes; the response must not."""
    for seed in ("0", "4242"):
        with serving("--insecure", env={"PYTHONHASHSEED": seed}) as address, grpc.insecure_channel(address) as ch:
            stub = grpcv1.FunctionRunnerServiceStub(ch)
            assert_identical(reference, run(stub, request()), f"server with PYTHONHASHSEED={seed}")

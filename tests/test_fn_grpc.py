"""The real gRPC server over a socket: v1 and v1beta1 protos, errors as Fatal results, startup."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as grpcv1beta1
from google.protobuf import json_format

from fixtures.tooling import REPO
from functions.contract import READY_TTL_SECONDS, Result, StepResponse
from functions.fn import apply_step_response, struct_to_dict
from functions.tooling.manifests import claim_to_xr
from harness.pki import issue, make_ca
from harness.server import free_port, serving

INPUT = {"apiVersion": "dynamo.fn.crossplane.io/v1beta1", "kind": "GraphDeployment"}


def component(name: str, type_: str) -> dict:
    main = {"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"}
    return {"name": name, "type": type_, "podTemplate": {"spec": {"containers": [main]}}}


XR = claim_to_xr(
    {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "demo", "namespace": "team-a"},
        "spec": {"components": [component("Frontend", "frontend"), component("Worker", "worker")]},
    }
)


def request(xr: dict, input_obj: dict, module=fnv1):
    req = module.RunFunctionRequest()
    req.meta.tag = "tag-1"
    req.observed.composite.resource.update(xr)
    req.input.update(input_obj)
    return req


@pytest.fixture(scope="module")
def address() -> str:
    with serving("--insecure") as addr:
        yield addr


def test_v1_renders_podcliqueset_and_frontend_service(address: str) -> None:
    with grpc.insecure_channel(address) as channel:
        rsp = grpcv1.FunctionRunnerServiceStub(channel).RunFunction(request(XR, INPUT), timeout=10)
    assert rsp.meta.tag == "tag-1"
    assert rsp.meta.ttl.seconds == READY_TTL_SECONDS  # the render step leaves when to look again to the status step
    assert list(rsp.results) == []
    assert sorted(rsp.desired.resources) == [
        "discovery-role",
        "discovery-rolebinding",
        "discovery-serviceaccount",
        "podcliqueset",
        "service-frontend",
        "service-worker",
    ]
    pcs = json_format.MessageToDict(rsp.desired.resources["podcliqueset"].resource)
    assert pcs["kind"] == "PodCliqueSet"
    assert pcs["metadata"] == {
        "name": "demo",
        "namespace": "team-a",
        "labels": {"nvidia.com/dynamo-graph-deployment-name": "demo"},
    }
    assert [c["name"] for c in pcs["spec"]["template"]["cliques"]] == ["frontend", "worker"]


def test_v1beta1_proto_is_served_too(address: str) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = grpcv1beta1.FunctionRunnerServiceStub(channel)
        rsp = stub.RunFunction(request(XR, INPUT, fnv1beta1), timeout=10)
    assert "podcliqueset" in rsp.desired.resources
    assert "service-frontend" in rsp.desired.resources


def test_bad_spec_is_a_fatal_result_naming_the_field(address: str) -> None:
    bad = {**XR, "spec": {**XR["spec"], "components": [{"name": "Worker", "replicas": -2}]}}
    req = request(bad, INPUT)
    req.desired.resources["kept"].resource.update({"apiVersion": "v1", "kind": "ConfigMap"})
    with grpc.insecure_channel(address) as channel:
        rsp = grpcv1.FunctionRunnerServiceStub(channel).RunFunction(req, timeout=10)
    # The Fatal, preceded by the same message as a Warning for the claim (Crossplane reports a Fatal on
    # the XR only).
    assert [(r.severity, r.target) for r in rsp.results] == [
        (fnv1.SEVERITY_WARNING, fnv1.TARGET_COMPOSITE_AND_CLAIM),
        (fnv1.SEVERITY_FATAL, fnv1.TARGET_UNSPECIFIED),
    ]
    assert all("spec.components[0].replicas" in r.message for r in rsp.results)
    assert list(rsp.desired.resources) == ["kept"]  # desired state passes through untouched


def test_unknown_input_kind_is_fatal(address: str) -> None:
    with grpc.insecure_channel(address) as channel:
        rsp = grpcv1.FunctionRunnerServiceStub(channel).RunFunction(
            request(XR, {"apiVersion": INPUT["apiVersion"], "kind": "Nope"}), timeout=10
        )
    assert rsp.results[0].severity == fnv1.SEVERITY_FATAL
    assert "unknown step dynamo.fn.crossplane.io/v1beta1/Nope" in rsp.results[0].message


def test_serve_exits_non_zero_when_it_cannot_start() -> None:
    with serving("--insecure") as addr:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "functions.tooling.main",
                "serve",
                "--insecure",
                "--address",
                addr.replace("127.0.0.1", "256.0.0.1"),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert proc.returncode != 0
    assert "cannot serve" in proc.stderr


def test_serve_requires_insecure_or_certificates() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "functions.tooling.main", "serve", "--address", f"127.0.0.1:{free_port()}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 2
    assert "--tls-certs-dir" in proc.stderr


def make_certs(tmp: Path) -> Path:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, with openssl."""
    make_ca(tmp, "test-ca")
    issue(tmp, "tls", "/CN=tls", "subjectAltName=IP:127.0.0.1")
    issue(tmp, "client", "/CN=client", "extendedKeyUsage=clientAuth")
    return tmp


def test_insecure_with_certificates_serves_only_plaintext(tmp_path: Path) -> None:
    """The SDK would bind TLS and plaintext listeners together; every plaintext call must succeed."""
    certs = make_certs(tmp_path)
    with serving("--insecure", env={"TLS_SERVER_CERTS_DIR": str(certs)}) as addr:
        for _ in range(20):
            with grpc.insecure_channel(addr) as channel:
                rsp = grpcv1.FunctionRunnerServiceStub(channel).RunFunction(request(XR, INPUT), timeout=10)
            assert rsp.meta.tag == "tag-1"


def test_mtls_accepts_a_client_signed_by_the_ca_and_rejects_plaintext(tmp_path: Path) -> None:
    certs = make_certs(tmp_path)
    creds = grpc.ssl_channel_credentials(
        root_certificates=(certs / "ca.crt").read_bytes(),
        private_key=(certs / "client.key").read_bytes(),
        certificate_chain=(certs / "client.crt").read_bytes(),
    )
    with serving("--tls-certs-dir", str(certs), ready_creds=creds) as addr:
        with grpc.secure_channel(addr, creds) as channel:
            rsp = grpcv1.FunctionRunnerServiceStub(channel).RunFunction(request(XR, INPUT), timeout=10)
        assert rsp.meta.tag == "tag-1"
        with grpc.insecure_channel(addr) as channel, pytest.raises(grpc.RpcError):
            grpcv1.FunctionRunnerServiceStub(channel).RunFunction(request(XR, INPUT), timeout=5)


def test_mtls_rejects_a_client_certificate_from_another_ca(tmp_path: Path) -> None:
    certs = make_certs(tmp_path / "real")
    rogue = make_certs(tmp_path / "rogue")
    good = grpc.ssl_channel_credentials(
        root_certificates=(certs / "ca.crt").read_bytes(),
        private_key=(certs / "client.key").read_bytes(),
        certificate_chain=(certs / "client.crt").read_bytes(),
    )
    forged = grpc.ssl_channel_credentials(
        root_certificates=(certs / "ca.crt").read_bytes(),  # trusts the server...
        private_key=(rogue / "client.key").read_bytes(),  # ...but presents a certificate the server's CA never signed
        certificate_chain=(rogue / "client.crt").read_bytes(),
    )
    no_client_cert = grpc.ssl_channel_credentials(root_certificates=(certs / "ca.crt").read_bytes())
    with serving("--tls-certs-dir", str(certs), ready_creds=good) as addr:
        for creds in (forged, no_client_cert):
            with grpc.secure_channel(addr, creds) as channel, pytest.raises(grpc.RpcError):
                grpcv1.FunctionRunnerServiceStub(channel).RunFunction(request(XR, INPUT), timeout=5)


def test_a_step_status_merges_with_an_earlier_steps_status() -> None:
    """The render step's status.rollingUpdate survives the status step, which writes other fields;
    a field written again is replaced whole (lists are not appended to)."""
    rsp = fnv1.RunFunctionResponse()
    apply_step_response(rsp, StepResponse(composite_status={"rollingUpdate": {"phase": "InProgress"}, "xs": [1, 2]}))
    apply_step_response(rsp, StepResponse(composite_status={"state": "pending", "xs": [3]}))
    status = struct_to_dict(rsp.desired.composite.resource)["status"]
    assert status == {"rollingUpdate": {"phase": "InProgress"}, "state": "pending", "xs": [3]}


def test_a_result_for_the_claim_targets_composite_and_claim() -> None:
    rsp = fnv1.RunFunctionResponse()
    results = [Result("normal", "Profiling job created", "ProfilingJobCreated", claim=True), Result("warning", "w")]
    apply_step_response(rsp, StepResponse(results=results))
    assert [(r.severity, r.reason, r.target) for r in rsp.results] == [
        (fnv1.SEVERITY_NORMAL, "ProfilingJobCreated", fnv1.TARGET_COMPOSITE_AND_CLAIM),
        (fnv1.SEVERITY_WARNING, "", fnv1.TARGET_UNSPECIFIED),
    ]

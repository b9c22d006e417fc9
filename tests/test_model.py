"""DynamoModel: endpoints from the base model's EndpointSlices, the LoRA load Job and its results, conditions as
upstream's (docs/upstream/checkpoint-gms-dgdr-model.md §5; docs/upstream/operator.md §4.4, §5.5)."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from fixtures.rendering import check_resource
from fixtures.tooling import REPO, crank_render, regenerated
from functions.kinds.model.lora_job import LOAD_SCRIPT
from functions.kinds.model.model_status import candidates, lora_status
from functions.kube.labels import model_hash
from functions.tooling.manifests import dump_documents, find_composition, load_documents
from functions.tooling.pipeline import render
from functions.tooling.render import admitted_xr

BASE = REPO / "examples" / "model" / "qwen3-base.yaml"
LORA = REPO / "examples" / "model" / "qwen3-lora.yaml"
STATES = REPO / "tests" / "scenarios" / "model-states"
# The states examples/README.md's previews read live beside the examples (STATES' regenerate.py writes them too).
EXAMPLE_STATES = {
    "base-discovered": REPO / "examples" / "model" / "cluster" / "qwen3-base",
    "all-loaded": REPO / "examples" / "model" / "cluster" / "qwen3-lora",
}
COMPOSITIONS = load_documents(REPO / "compositions")
Obj = dict[str, Any]


def run(claim: Path | Obj, observed: list[Obj] | None = None, required: list[Obj] | None = None) -> Any:
    doc = load_documents(claim)[0] if isinstance(claim, Path) else copy.deepcopy(claim)
    xr = admitted_xr(doc, "dynamo-demo", "Strict")
    return render(xr, find_composition(xr, COMPOSITIONS), observed or [], required or [], converge=False)


def conditions(out: Any) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c.get("message", "")) for c in out.composite["status"]["conditions"]}


def state_folder(name: str) -> Path:
    return EXAMPLE_STATES.get(name, STATES / name)


def state(name: str) -> tuple[list[Obj], list[Obj]]:
    folder = state_folder(name)
    observed = load_documents(folder / "observed.yaml") if (folder / "observed.yaml").exists() else []
    return observed, load_documents(folder / "required.yaml")


# --- discovery ------------------------------------------------------------------------------------------------


def test_no_endpoints_gives_upstreams_conditions() -> None:
    out = run(LORA, *state("no-endpoints"))
    assert conditions(out)["ServicesFound"] == (
        "False", "NoServicesFound", "No endpoint slices found for base model Qwen/Qwen3-0.6B")  # fmt: skip
    assert conditions(out)["EndpointsReady"][:2] == ("False", "NoEndpoints")
    assert out.composite["status"]["totalEndpoints"] == 0
    assert not out.composed, "no endpoints: no load Job"


def test_a_base_model_lists_its_endpoints_not_ready() -> None:
    out = run(BASE, *state("base-discovered"))
    status = out.composite["status"]
    assert status["totalEndpoints"] == 2 and status["readyEndpoints"] == 0
    assert all(e["ready"] is False and e["address"].endswith(":9090") for e in status["endpoints"])
    assert conditions(out)["ServicesFound"] == ("True", "ServicesFound", "Found 1 service(s)")
    assert conditions(out)["EndpointsReady"] == ("True", "EndpointsDiscovered", "Found 2 endpoint(s) for base model")
    assert not out.composed


def test_candidates_are_every_pod_backed_endpoint_once_per_pod() -> None:
    def endpoint(pod: str, ip: str, ready: bool | None = True) -> Obj:
        conditions = {} if ready is None else {"ready": ready}
        return {"addresses": [ip, "10.9.9.9"], "conditions": conditions,
                "targetRef": {"kind": "Pod", "name": pod, "uid": f"uid-{pod}"}}  # fmt: skip

    slices = [
        {"metadata": {"name": "b"}, "endpoints": [endpoint("p2", "10.0.0.2", False), endpoint("p1", "10.0.0.1")]},
        {"metadata": {"name": "a"}, "endpoints": [endpoint("p1", "10.0.0.99"), {"addresses": ["10.0.0.5"]}]},
        {"metadata": {"name": "c"}, "endpoints": [endpoint("p3", "10.0.0.3", None)]},
    ]
    found = candidates(slices)
    assert [(c.pod, c.address, c.kubernetes_ready) for c in found] == [
        ("p1", "http://10.0.0.99:9090", True),  # slice "a" first: its address wins
        ("p2", "http://10.0.0.2:9090", False),  # not ready, still a candidate
        ("p3", "http://10.0.0.3:9090", True),  # no ready condition means ready
    ]


# --- LoRA -----------------------------------------------------------------------------------------------------


def test_a_lora_composes_its_load_job_for_the_endpoint_set() -> None:
    _, required = state("all-loaded")
    required = [o for o in required if not o["metadata"].get("ownerReferences")]  # no Job pod yet
    out = run(LORA, [], required)
    (job,) = out.composed
    check_resource(job)
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["command"][:2] == ["/bin/sh", "-c"]
    assert container["command"][4] == "0", "a first attempt does not wait"
    body = json.loads(container["command"][5])
    assert body == {"lora_name": "qwen3-sql-lora", "source": {"uri": "hf://example-org/qwen3-0.6b-sql-lora"}}
    addresses = container["command"][6:]
    assert addresses == sorted(e["address"] for e in out.composite["status"]["endpoints"])
    assert container["securityContext"]["runAsNonRoot"] is True
    assert job["spec"]["template"]["spec"]["automountServiceAccountToken"] is False
    assert conditions(out)["EndpointsReady"] == (
        "False", "NotReady", "Found 0 ready endpoint(s) and 0 fallback-covered endpoint(s) out of 2 total")  # fmt: skip
    more = [*required, copy.deepcopy(required[-1])]
    more[-1]["metadata"]["name"] += "-new"
    more[-1]["metadata"]["uid"] = "other"
    slice_ = next(o for o in more if o["kind"] == "EndpointSlice")
    slice_["endpoints"].append({**slice_["endpoints"][0], "addresses": ["10.244.7.7"],
                                "targetRef": {"kind": "Pod", "name": "new-pod", "uid": "new-uid"}})  # fmt: skip
    (bigger,) = run(LORA, [], more).composed
    assert bigger["metadata"]["name"] != job["metadata"]["name"], "a new endpoint set gets a new Job"


@pytest.mark.parametrize(
    ("name", "ready", "reason", "serving"),
    [("all-loaded", 2, "AllEndpointsReady", True), ("some-ready", 2, "NotReady", False),
     ("failed-load", 0, "NotReady", False)],
)  # fmt: skip
def test_each_lora_state_reports_what_its_job_found(name: str, ready: int, reason: str, serving: bool) -> None:
    out = run(LORA, *state(name))
    status = out.composite["status"]
    assert status["readyEndpoints"] == ready
    assert conditions(out)["EndpointsReady"][1] == reason
    ready_condition = next(c for c in out.composite["status"]["conditions"] if c["type"] == "Ready")
    assert (ready_condition["status"] == "True") is serving
    failed = [e for e in status["endpoints"] if not e["ready"]]
    assert len(failed) == status["totalEndpoints"] - ready


def test_a_legacy_prefill_is_covered_by_a_capable_prefill() -> None:
    from functions.kinds.model.model_status import Candidate

    found = [Candidate("p1", "http://a:9090", True), Candidate("p2", "http://b:9090", True)]
    labels = {"nvidia.com/dynamo-component-type": "prefill", "nvidia.com/dynamo-graph-deployment-name": "g"}
    pods = {p: {"metadata": {"labels": dict(labels)}} for p in ("p1", "p2")}
    results = {
        "http://a:9090": {"code": 200},
        "http://b:9090": {"code": 500, "message": "LoRA management not available"},
    }
    status = lora_status("m", found, 1, results, pods)
    assert [e.get("loraFallbackCovered") for e in status.endpoints] == [None, True]
    assert (status.ready, status.covered, status.serving) == (1, 1, True)
    assert status.as_status()["loraFallbackCoveredEndpoints"] == 1
    pods["p1"]["metadata"]["labels"]["nvidia.com/dynamo-graph-deployment-name"] = "other"
    assert lora_status("m", found, 1, results, pods).serving is False, "no capable prefill in its group"


def test_a_lora_needs_a_supported_source_uri() -> None:
    from functions.tooling.validation import derive_crds, validate_object

    (xrd,) = load_documents(REPO / "xrds" / "dynamomodels.yaml")
    crd = next(c for c in derive_crds(xrd) if c["spec"]["names"]["kind"] == "DynamoModel")
    claim = load_documents(LORA)[0]
    assert validate_object(claim, crd) == []
    for uri in ("s3://b/p", "file:///models/x"):
        claim["spec"]["source"]["uri"] = uri
        assert validate_object(claim, crd) == []
    claim["spec"]["source"]["uri"] = "https://example.com/x"
    assert any("source.uri starting with s3://" in v.message for v in validate_object(claim, crd))
    old = load_documents(LORA)[0]
    changed = copy.deepcopy(old)
    changed["spec"]["baseModelName"] = "other"
    assert any("baseModelName is immutable" in v.message for v in validate_object(changed, crd, old=old))


# --- the load script, run against an endpoint ------------------------------------------------------------------


class _Endpoint(BaseHTTPRequestHandler):
    requests: ClassVar[list[tuple[str, str, dict[str, Any]]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append((self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.skipif(shutil.which("curl") is None, reason="the load script needs curl, which this machine lacks")
def test_the_load_script_posts_upstreams_request_and_reports_each_result(tmp_path: Path) -> None:
    server = HTTPServer(("127.0.0.1", 0), _Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        up = f"http://127.0.0.1:{server.server_port}"
        down = "http://127.0.0.1:9"  # nothing listens: connection refused
        body = json.dumps({"lora_name": "qwen3-sql-lora", "source": {"uri": "hf://o/m"}})
        script = LOAD_SCRIPT.replace("/tmp/", f"{tmp_path}/")
        script = script.replace("/dev/termination-log", str(tmp_path / "termination-log"))
        done = subprocess.run(["sh", "-c", script, "lora-load", "0", body, up, down], capture_output=True, text=True,
                              timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        lines = [json.loads(line) for line in (tmp_path / "termination-log").read_text().splitlines()]
        by_address = {item["address"]: item for item in lines}
        assert by_address[up]["code"] == 200
        assert by_address[down]["code"] == 0 and "Failed to connect" in by_address[down]["message"]
        assert _Endpoint.requests[-1] == ("/v1/loras", "application/json", json.loads(body))
    finally:
        server.shutdown()


# --- examples ---------------------------------------------------------------------------------------------------

CRANK_STATES = [("base-discovered", BASE), ("no-endpoints", LORA), ("some-ready", LORA), ("all-loaded", LORA),
                ("failed-load", LORA)]  # fmt: skip


@pytest.mark.parametrize(("name", "claim"), CRANK_STATES, ids=[s for s, _ in CRANK_STATES])
def test_crank_renders_each_state_as_in_process(name: str, claim: Path, functions_file: Path, tmp_path: Path) -> None:
    xr = admitted_xr(load_documents(claim)[0], "dynamo-demo", "Strict")
    composition = find_composition(xr, COMPOSITIONS)
    (tmp_path / "xr.yaml").write_text(yaml.safe_dump(xr))
    (tmp_path / "composition.yaml").write_text(yaml.safe_dump(composition))
    folder = state_folder(name)
    args = ["-e", str(folder / "required.yaml")]
    if (folder / "observed.yaml").exists():
        args += ["-o", str(folder / "observed.yaml")]
    theirs = crank_render(str(tmp_path / "xr.yaml"), str(tmp_path / "composition.yaml"), str(functions_file), *args)
    out = render(xr, composition, *state(name), converge=False)
    assert dump_documents([out.composite, *out.composed]) == theirs


def test_the_states_are_what_the_step_renders_today() -> None:
    def examples() -> dict[Path, str]:
        return {p: p.read_text() for folder in EXAMPLE_STATES.values() for p in sorted(folder.glob("*.yaml"))}

    examples_before = examples()
    before, after = regenerated(STATES)
    assert before == after, "stale: run tests/scenarios/model-states/regenerate.py and review the diff"
    assert examples_before == examples(), "stale: run tests/scenarios/model-states/regenerate.py and review the diff"


def test_the_model_service_the_dgd_composes_carries_the_hash_the_model_selects() -> None:
    out = render(
        admitted_xr(load_documents(REPO / "examples" / "model" / "vllm-agg-model.yaml")[0], "dynamo-demo", "Strict"),
        find_composition({"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment"}, COMPOSITIONS),
        converge=False,
    )
    service = next(o for o in out.composed if o["metadata"]["name"].startswith("dynamo-model-"))
    assert service["metadata"]["labels"]["nvidia.com/dynamo-base-model-hash"] == model_hash("Qwen/Qwen3-0.6B")

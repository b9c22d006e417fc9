"""Crossplane core's own render engine: ``crossplane internal render`` of the version the tests run.

From v2.3 on, Crossplane renders with its real composite reconciler: the binary reads a ``RenderRequest``
(protobuf, ``proto/render/v1alpha1/render.proto`` of its module) on stdin and writes a ``RenderResponse``. The
Python messages are generated from that file at test time (grpcio-tools), into the cache, once per proto.
scripts/install-tools.sh copies the proto beside Crossplane's CRDs and names it ``CROSSPLANE_RENDER_PROTO``.

The engine's output is the reconciler's state (resourceRefs, Synced and Responsive conditions, real
timestamps, fake UIDs in owner references); ``comparable`` keeps what a pipeline decides: every composed
resource by kind and name, and the XR's status but for Crossplane's own conditions and times.
"""

from __future__ import annotations

import hashlib
import importlib
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from google.protobuf import json_format, struct_pb2

from functions.api.graph import whole_numbers
from tooling import _missing, _tools_env, cache_dir

Obj = dict[str, Any]
FUNCTION = "function-dynamo-function-dynamo"
CROSSPLANE_CONDITIONS = frozenset({"Synced", "Responsive", "Healthy"})


def require_core() -> tuple[Path, Path]:
    env = _tools_env()
    core, proto = env.get("CROSSPLANE"), env.get("CROSSPLANE_RENDER_PROTO")
    if not core or not proto or not Path(core).exists() or not Path(proto).exists():
        _missing("Crossplane core or its render.proto is not installed: run scripts/install-tools.sh")
    return Path(core), Path(proto)  # type: ignore[arg-type]


@cache
def render_messages() -> Any:
    """The generated ``render_pb2`` module for the installed proto."""
    _, proto = require_core()
    root = proto.parents[2]  # .../render/v1alpha1/render.proto -> the include root
    digest = hashlib.sha256(proto.read_bytes()).hexdigest()[:12]
    out = cache_dir() / f"render-proto-{digest}"
    if not (out / "render" / "v1alpha1" / "render_pb2.py").exists():
        out.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", f"-I{root}", f"--python_out={out}", str(proto)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
    if str(out) not in sys.path:
        sys.path.insert(0, str(out))
    return importlib.import_module("render.v1alpha1.render_pb2")


def _struct(obj: Obj) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(obj)
    return s


def core_render(
    xr: Obj, composition: Obj, function_address: str, observed: list[Obj] | None = None,
    required: list[Obj] | None = None,
) -> Obj:  # fmt: skip
    """{"composite": XR, "composed": [...], "events": [...]} as Crossplane core's render engine gives them."""
    core, _ = require_core()
    messages = render_messages()
    request = messages.RenderRequest(
        composite=messages.CompositeInput(
            composite_resource=_struct(xr),
            composition=_struct(composition),
            functions=[messages.FunctionInput(name=FUNCTION, address=function_address)],
            observed_resources=[_struct(o) for o in observed or []],
            required_resources=[_struct(o) for o in required or []],
        )
    )
    done = subprocess.run(
        [str(core), "internal", "render"], input=request.SerializeToString(), capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()
    response = messages.RenderResponse()
    response.ParseFromString(done.stdout)
    out = json_format.MessageToDict(response.composite)
    return {
        "composite": out["compositeResource"],
        "composed": out.get("composedResources", []),
        "events": out.get("events", []),
    }


def _without_uids(obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    refs = [{k: v for k, v in ref.items() if k != "uid"} for ref in meta.get("ownerReferences") or []]
    return {**obj, "metadata": {**meta, "ownerReferences": refs}} if refs else obj


def comparable(composite: Obj, composed: list[Obj]) -> Obj:
    """What a pipeline decides, in a form both renders share."""
    status = dict(composite.get("status") or {})
    conditions = [
        {k: v for k, v in c.items() if k != "lastTransitionTime"}
        for c in status.pop("conditions", [])
        if c.get("type") not in CROSSPLANE_CONDITIONS
    ]
    resources = {(o["apiVersion"], o["kind"], o["metadata"]["name"]): whole_numbers(_without_uids(o)) for o in composed}
    return {
        "status": whole_numbers(status),
        "conditions": sorted(conditions, key=lambda c: c["type"]),
        "resources": dict(sorted(resources.items())),
    }

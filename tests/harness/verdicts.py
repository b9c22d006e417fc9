"""The real API server's verdict on a claim, in the terms of the offline validation's: accepted (None), or the field
paths it names, normalised to one spelling for both sides; and the claims both are asked about (the corpus's)."""

from __future__ import annotations

import copy
import re
from typing import Any

from fixtures.tooling import shared_dir
from functions.tooling.manifests import CLAIM_KINDS, load_documents
from harness.apiserver import plural as plural_of
from harness.apiserver import resource_path
from harness.controlplane import APIError, ControlPlane

NAMESPACE = "agreement"
GROUP = "nvidia.com"
_UNKNOWN_FIELD = re.compile(r'unknown field "([^"]+)"')
_KEY = re.compile(r"\[([^\]\d][^\]]*)\]")


def normalise(path: str) -> str:
    """One spelling of a field path for both sides: map keys as ``.key``, no leading dot, the object itself as ``""``
    (``<root>`` offline, ``<nil>`` in the API server's summary of skipped CEL rules)."""
    path = _KEY.sub(lambda m: "." + m.group(1), path.strip())
    return "" if path in ("<root>", "<nil>", "") else path.lstrip(".")


def server_paths(err: APIError) -> set[str]:
    """The field paths of an API server refusal: its causes, or the fields named by a strict decoding error."""
    paths = {normalise(c.get("field") or "") for c in err.causes}
    paths |= {normalise(f) for f in _UNKNOWN_FIELD.findall(str(err.status.get("message", "")))}
    return paths or {""}


def server_verdict(cp: ControlPlane, obj: dict[str, Any], old: dict[str, Any] | None) -> set[str] | None:
    """None when the API server accepts ``obj`` (dry run), else the paths it names."""
    client = cp.client
    plural = plural_of(obj["kind"])
    version = obj["apiVersion"].split("/")[1]
    collection = resource_path(GROUP, version, plural, NAMESPACE)
    strict = {"fieldValidation": "Strict"}
    try:
        if old is None:
            client.request("POST", collection, obj, params={"dryRun": "All", **strict})
            return None
        stored = client.request("POST", collection, old, params=strict)
        try:
            update = copy.deepcopy(obj)
            update["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
            client.request("PUT", f"{collection}/{obj['metadata']['name']}", update, params={"dryRun": "All", **strict})
            return None
        finally:
            client.delete(f"{collection}/{obj['metadata']['name']}")
    except APIError as err:
        if err.code >= 500:
            raise
        return server_paths(err)


def corpus_claims() -> list[tuple[str, dict[str, Any]]]:
    root = shared_dir() / "corpus"
    if not root.is_dir():
        return []
    out = []
    for path in sorted(root.rglob("*.yaml")):
        for i, doc in enumerate(load_documents(path)):
            if (
                isinstance(doc, dict)
                and doc.get("kind") in CLAIM_KINDS
                and str(doc.get("apiVersion", "")).startswith("nvidia.com/")
            ):
                out.append((f"{path.relative_to(root)}#{i}", doc))
    return out


def as_claim(doc: dict[str, Any], name: str) -> dict[str, Any]:
    obj = copy.deepcopy(doc)
    meta = obj.setdefault("metadata", {})
    meta["namespace"] = NAMESPACE
    meta.setdefault("name", name)
    return obj

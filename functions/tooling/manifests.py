"""Turning a claim into the XR Crossplane would create for it, finding its Composition, and printing YAML as
Go reads it."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import yaml

from functions.kinds import GROUP, KINDS, kind_of

# Reading manifests moved to functions.tooling.documents; these names are still imported from here.
from functions.tooling.documents import ManifestError as ManifestError
from functions.tooling.documents import checked_objects as checked_objects
from functions.tooling.documents import load_documents as load_documents
from functions.tooling.documents import located_documents as located_documents

# claim kind -> (XR kind, referenceable XR apiVersion): the claims package's kinds. In the default package a
# kind's manifest is its own (namespaced) XR, unless its Kind keeps the claims shape (``Kind.namespaced``).
CLAIM_KINDS = {k.claim_kind: (k.xr_kind, k.xr_api_version) for k in KINDS}
CLUSTER_XR_KINDS = frozenset(xr_kind for xr_kind, _ in CLAIM_KINDS.values())
CLAIM_NAME_LABEL = "crossplane.io/claim-name"
CLAIM_NAMESPACE_LABEL = "crossplane.io/claim-namespace"
# Spec fields only a claim has: Crossplane's claim syncer does not copy them into the XR. The other
# machinery fields (compositionRef, compositionSelector, compositionUpdatePolicy,
# compositionRevisionSelector) are propagated; compositionRevisionRef only with a Manual update policy.
CLAIM_ONLY_SPEC_FIELDS = frozenset({"compositeDeletePolicy", "resourceRef", "writeConnectionSecretToRef"})


# The API server's name generator (Crossplane names a claim's XR with it): a generateName base is cut to 58
# characters before the 5 random ones.
MAX_GENERATE_NAME_BASE = 58


def xr_name_for_claim(name: str, namespace: str) -> str:
    """Crossplane names a claim's XR ``<claim>-<random 5>`` (the base ``<claim>-`` cut to 58 characters, as the API
    server's name generator does); a preview uses a stable suffix instead."""
    suffix = hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:5]
    return f"{name}-"[:MAX_GENERATE_NAME_BASE] + suffix


def claim_to_xr(claim: dict[str, Any], default_namespace: str = "default") -> dict[str, Any]:
    """The XR for a claim, as Crossplane's claim reconciler creates it (labels, claimRef, spec)."""
    kind = claim.get("kind")
    if kind not in CLAIM_KINDS:
        raise ManifestError(f"kind: {kind!r} is not a claim kind this package serves ({', '.join(CLAIM_KINDS)})")
    group = str(claim.get("apiVersion", "")).split("/")[0]
    if group != GROUP:
        raise ManifestError(f"apiVersion: {claim.get('apiVersion')!r} is not in group {GROUP}")
    xr_kind, xr_api_version = CLAIM_KINDS[kind]
    meta = claim.get("metadata") or {}
    name = meta.get("name")
    if not name:
        raise ManifestError("metadata.name: required")
    namespace = meta.get("namespace") or default_namespace
    labels = {**(meta.get("labels") or {}), CLAIM_NAME_LABEL: name, CLAIM_NAMESPACE_LABEL: namespace}
    xr_meta: dict[str, Any] = {"name": xr_name_for_claim(name, namespace), "labels": labels}
    if meta.get("annotations"):
        xr_meta["annotations"] = dict(meta["annotations"])
    spec = {k: v for k, v in (claim.get("spec") or {}).items() if k not in CLAIM_ONLY_SPEC_FIELDS}
    if spec.get("compositionUpdatePolicy") != "Manual":
        spec.pop("compositionRevisionRef", None)
    spec["claimRef"] = {"apiVersion": claim["apiVersion"], "kind": kind, "name": name, "namespace": namespace}
    return {"apiVersion": xr_api_version, "kind": xr_kind, "metadata": xr_meta, "spec": spec}


def is_claim(doc: dict[str, Any], claims: bool) -> bool:
    """Whether the manifest is a claim: always in the claims package (``claims``); in the default package only
    for the kinds that keep the claims shape there."""
    kind = kind_of(str(doc.get("kind")))
    return doc.get("kind") in CLAIM_KINDS and (claims or (kind is not None and not kind.namespaced))


def namespaced_xr(doc: dict[str, Any], default_namespace: str = "default") -> dict[str, Any]:
    """A manifest of the default package as Crossplane reads the XR it is: at the referenceable version (the
    API server converts by rewriting the apiVersion alone), in ``default_namespace`` when it names none."""
    group = str(doc.get("apiVersion", "")).split("/")[0]
    if group != GROUP:
        raise ManifestError(f"apiVersion: {doc.get('apiVersion')!r} is not in group {GROUP}")
    meta = doc.get("metadata") or {}
    if not meta.get("name"):
        raise ManifestError("metadata.name: required")
    _, api_version = CLAIM_KINDS[str(doc.get("kind"))]
    if meta.get("namespace") and doc.get("apiVersion") == api_version:
        return doc
    return {
        **doc,
        "apiVersion": api_version,
        "metadata": {**meta, "namespace": meta.get("namespace") or default_namespace},
    }


def as_xr(doc: dict[str, Any], default_namespace: str = "default", *, claims: bool = False) -> dict[str, Any]:
    """The XR Crossplane reconciles for a manifest: a claim (``is_claim``) becomes its cluster-scoped XR, a
    cluster-scoped XR is returned as it is, and any other manifest of ours is a namespaced XR itself."""
    kind = doc.get("kind")
    if kind in CLUSTER_XR_KINDS:
        return doc
    if kind not in CLAIM_KINDS:
        raise ManifestError(f"kind: {kind!r} is not a kind this package serves ({', '.join(CLAIM_KINDS)})")
    if is_claim(doc, claims):
        return claim_to_xr(doc, default_namespace)
    return namespaced_xr(doc, default_namespace)


def serves_kind(composition_kind: Any, xr_kind: Any) -> bool:
    """Whether a Composition for ``composition_kind`` renders an XR of ``xr_kind``: its own kind, or a claim's
    cluster XR ``X<Kind>``, whose Composition in the claims package is the generated twin of the default
    package's (``function-dynamo xrds``): the same pipeline."""
    return composition_kind == xr_kind or (xr_kind in CLUSTER_XR_KINDS and xr_kind == f"X{composition_kind}")


def find_composition(xr: dict[str, Any], compositions: list[dict[str, Any]]) -> dict[str, Any]:
    """The Composition for the XR's kind; the default package's twin serves a claim's XR when its own is not
    among ``compositions`` (``serves_kind``)."""
    served = [
        comp
        for comp in compositions
        if comp.get("kind") == "Composition"
        and serves_kind(((comp.get("spec") or {}).get("compositeTypeRef") or {}).get("kind"), xr.get("kind"))
    ]
    exact = [c for c in served if c["spec"]["compositeTypeRef"]["kind"] == xr.get("kind")]
    if exact or served:
        return (exact or served)[0]
    raise ManifestError(f"no Composition for {xr.get('kind')} among the given compositions")


class _RenderDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Quotes strings as Go's YAML encoder does, so output reads like crossplane render's.

    Go double-quotes a string that would otherwise read as another type ("true", "1") and writes multi-line
    strings as literal blocks. The style is chosen here, when the string becomes a node, so that libyaml's
    emitter (C, and the one Go's YAML encoder was ported from) writes the text; it picks plain or single quotes
    for every other string, as Go's does.
    """

    _STRING_TAGS = frozenset({"tag:yaml.org,2002:str", "tag:yaml.org,2002:yaml"})  # "yaml": PyYAML's "*"/"&"/"!"

    # YAML 1.1 booleans Go's resolver knows and PyYAML's does not.
    _GO_ONLY_BOOLS = frozenset({"y", "Y", "n", "N"})
    # Go's YAML reads "1e5" and "791904e4" as floats; PyYAML's resolver wants a dot. Such a string printed plain
    # would reach kubectl as a number (a label value like a worker hash, refused), so it is double-quoted as Go does.
    _GO_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")

    def represent_go_str(self, data: str) -> yaml.ScalarNode:
        return self.represent_scalar("tag:yaml.org,2002:str", data, style=self._go_style(data))

    def _go_style(self, value: str) -> str | None:
        if "\n" in value:
            return "|"  # as Go asks for it: a literal block where the emitter allows one, else double quotes
        if (
            value in self._GO_ONLY_BOOLS
            or self._GO_FLOAT.match(value)
            or self.resolve(yaml.ScalarNode, value, (True, False)) not in self._STRING_TAGS
        ):
            return '"'
        return None


_RenderDumper.add_representer(str, _RenderDumper.represent_go_str)
# libyaml ends a document whose last scalar keeps its trailing line breaks ("|+") with "...": Go's encoder does not.
_OPEN_END = "\n...\n"


def dump_yaml(obj: Any, *, sort_keys: bool = True, width: int = 80) -> str:
    """YAML that Go (kubectl, Crossplane) reads back as the same values: strings Go would take for numbers or
    booleans are quoted."""
    text = yaml.dump(obj, Dumper=_RenderDumper, sort_keys=sort_keys, width=width, allow_unicode=True)
    return text[: -len(_OPEN_END) + 1] if text.endswith(_OPEN_END) else text


def dump_documents(docs: list[dict[str, Any]]) -> str:
    """YAML documents as crossplane render prints them (``---`` before each, keys sorted)."""
    return "".join("---\n" + dump_yaml(d) for d in docs)

"""Why ``validate`` or ``render`` skips a document: it is not a manifest of this package's kinds. Each skipped
document names where it is, its kind and why, with a "did you mean" for a near miss of one of our kinds."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from functions.api.echo import shown
from functions.kinds import GROUP, KINDS, kind_of
from functions.tooling.documents import Document

OUR_KINDS = tuple(name for k in KINDS for name in (k.claim_kind, k.xr_kind))
NOT_OURS = "not a Dynamo kind"
EMPTY_DOCUMENT = "empty document"
EMPTY_FILE = "empty file"
# How close a kind must be to one of ours (difflib's ratio, case ignored) to be named as the kind meant:
# "DynamoGraphDeploymnet" and "DynamoGraphDeployments" are; "Deployment" and "ConfigMap" are not.
NEAR_MISS = 0.8
# What a YAML scalar document reads as, named as YAML names it.
_SCALARS = {bool: "boolean", int: "number", float: "number", str: "string"}


@dataclass(frozen=True)
class Skipped:
    """A skipped document (``index`` None: a whole file that holds none)."""

    file: str
    index: int | None
    kind: str | None
    name: str | None
    reason: str
    suggestion: str | None = None  # what was meant, for a near miss

    @property
    def where(self) -> str:
        return self.file if self.index is None else f"{self.file}#{self.index}"

    @property
    def notable(self) -> bool:
        """Whether it looks like a mistake, rather than a manifest of another kind or an empty document: a kind
        close to ours, one of ours in another group, no kind, or not an object."""
        return self.suggestion is not None or self.reason not in (NOT_OURS, EMPTY_DOCUMENT)

    def describe(self) -> str:
        """``FILE#index Kind/name: why`` (``; did you mean X?`` for a near miss), as both commands print it."""
        what = f" {self.kind}/{self.name or '?'}" if self.kind is not None else ""
        meant = f"; did you mean {self.suggestion}?" if self.suggestion else ""
        return f"{self.where}{what}: {self.reason}{meant}"

    def as_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "index": self.index,
            "kind": self.kind,
            "name": self.name,
            "reason": self.reason,
            "didYouMean": self.suggestion,
        }


def skipped_document(doc: Document) -> Skipped:
    """Why ``doc``, which is not a manifest this package serves (``admit_manifest.served``), is skipped."""
    value = doc.value
    if value is None:
        return Skipped(doc.file, doc.index, None, None, EMPTY_DOCUMENT)
    if isinstance(value, list):
        return Skipped(doc.file, doc.index, None, None, "a list, not an object")
    if not isinstance(value, dict):
        return Skipped(doc.file, doc.index, None, None, f"a {_SCALARS.get(type(value), 'scalar')}, not an object")
    kind, api_version = value.get("kind"), value.get("apiVersion")
    meta = value.get("metadata")
    name = shown(meta["name"]) if isinstance(meta, dict) and isinstance(meta.get("name"), str) else None
    if kind is None or kind == "":
        return Skipped(doc.file, doc.index, None, name, "no kind")
    if not isinstance(kind, str):
        return Skipped(doc.file, doc.index, shown(kind), name, "kind is not a string")
    ours = kind_of(kind)
    if ours is None:
        return Skipped(doc.file, doc.index, shown(kind), name, NOT_OURS, near_miss(kind))
    if api_version is None or api_version == "":
        return Skipped(doc.file, doc.index, kind, name, "no apiVersion", ours.xr_api_version)
    reason = f"apiVersion {shown(repr(api_version))} is not in group {GROUP}"
    return Skipped(doc.file, doc.index, kind, name, reason, ours.xr_api_version)


def empty_file(file: str) -> Skipped:
    return Skipped(file, None, None, None, EMPTY_FILE)


def near_miss(kind: str) -> str | None:
    """The kind of ours ``kind`` is closest to, if it is close (``NEAR_MISS``, case ignored)."""
    by_lower = {k.lower(): k for k in OUR_KINDS}
    found = difflib.get_close_matches(kind.lower(), by_lower, n=1, cutoff=NEAR_MISS)
    return by_lower[found[0]] if found else None

"""``function-dynamo validate``: check manifests as the cluster would, without a cluster.

First what the API server does with the manifest (``functions.tooling.admit_manifest``: unknown fields, nulls,
defaults, then the structural schema and CEL rules of the CRD Crossplane derives from our XRD), then
the function's own rules on the admitted object (what the render step would reject with a Fatal). With the object
it replaces (``--old``), the rules upstream's webhook checks differently on update (a component's image and
runtime version) compare with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from functions.api.echo import shown
from functions.api.operator_config import OPERATOR_CONFIG_REQUIREMENT
from functions.contract import PREVIOUS_COMPOSITE_CONTEXT_KEY, StepRequest
from functions.kinds import kind_of, render_step
from functions.tooling.admit_manifest import admit_manifest, served
from functions.tooling.documents import (
    ManifestError,
    checked_objects,
    file_documents,
    load_documents,
    manifest_files,
    source_name,
)
from functions.tooling.input_bounds import InputRefused, check_object, check_request_depth
from functions.tooling.manifests import as_xr
from functions.tooling.skipped import Skipped, empty_file, skipped_document
from functions.tooling.validation import FieldValidation


@dataclass
class DocumentReport:
    where: str  # file#index kind/name (a file that is not valid YAML: the file)
    violations: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what the API server would warn about (pruned fields)
    notes: list[str] = field(default_factory=list)
    file: str = ""
    index: int | None = None  # None: the whole file (not valid YAML)
    kind: str | None = None
    name: str | None = None

    @property
    def ok(self) -> bool:
        return not self.violations


def validate_document(
    doc: dict[str, Any],
    where: str,
    old: dict[str, Any] | None = None,
    operator_config: list[dict[str, Any]] | None = None,
    field_validation: FieldValidation = "Strict",
) -> DocumentReport:
    name = shown(str(_identity(doc)[0] or "?"))
    report = DocumentReport(f"{where} {doc.get('kind')}/{name}", kind=str(doc.get("kind")), name=name)
    try:
        check_request_depth(doc)  # what a composition function could not be sent
    except InputRefused as err:
        report.violations.append(str(err))
        return report
    admission = admit_manifest(doc, old=old, field_validation=field_validation)
    result = admission.result
    report.violations += [str(v) for v in result.violations]
    report.warnings += admission.warnings
    # a rule not evaluated is no verdict: the document is not reported valid (the cluster would evaluate it)
    report.violations += [f"{n.path}: not evaluated offline: {n.reason} ({n.rule})" for n in result.not_evaluated]
    if admission.object is None:
        return report  # the API server would stop here; the function never sees the object
    request = StepRequest(
        input={},
        observed_composite=as_xr(admission.object),
        required={OPERATOR_CONFIG_REQUIREMENT: operator_config or []},
        # an update: the rules upstream checks differently on update compare with the object it replaces
        context={PREVIOUS_COMPOSITE_CONTEXT_KEY: as_xr(old)} if old is not None else {},
    )
    kind = kind_of(str(doc["kind"]))
    assert kind is not None, "served() lets only the package's kinds through"
    response = render_step(kind)(request)
    for result in (r for r in response.results if r.severity == "fatal"):
        report.violations.append(f"{result.message} (function)")
    report.notes += [f"{c.type}: {c.message}" for c in response.conditions if c.status == "True" and c.message]
    return report


def _identity(doc: dict[str, Any]) -> tuple[str | None, Any]:
    """(name, kind) of a manifest, the name None unless it is a string (the schema check then names it)."""
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return (name if isinstance(name, str) else None), doc.get("kind")


def validate_files(
    paths: list[Path],
    old: Path | None = None,
    operator_config: Path | None = None,
    field_validation: FieldValidation = "Strict",
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[DocumentReport], list[Skipped]]:
    """Reports for every document this package serves (and one for each file that is not valid YAML), and every
    other document, skipped, with why. ``progress(files done, files)`` is called after each file."""
    platform_docs = checked_objects(operator_config, check_object) if operator_config else []
    old_docs = {_identity(d): d for d in load_documents(old) if isinstance(d, dict)} if old else {}
    reports: list[DocumentReport] = []
    skipped: list[Skipped] = []
    files = [f for p in paths for f in manifest_files(p)]
    for done, path in enumerate(files, 1):
        name = source_name(path)
        try:
            docs = file_documents(path)
        except ManifestError as err:  # reported, and the other files checked
            reports.append(DocumentReport(name, [str(err).removeprefix(f"{name}: ")], file=name))
            docs = []
        else:
            if not docs:
                skipped.append(empty_file(name))
        for doc in docs:
            if not served(doc.value):
                skipped.append(skipped_document(doc))
                continue
            previous = old_docs.get(_identity(doc.value))
            report = validate_document(doc.value, doc.where, previous, platform_docs, field_validation)
            reports.append(replace(report, file=doc.file, index=doc.index))
        if progress is not None:
            progress(done, len(files))
    return reports, skipped

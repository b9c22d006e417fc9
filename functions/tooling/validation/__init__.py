"""Offline Kubernetes validation: CRD schemas (structural + CEL) and Crossplane XRD -> CRD derivation.

Public API::

    validate_object(obj, crd, *, old=None) -> list[Violation]
    validate(obj, crd, *, old=None, cel_on_invalid=False) -> ValidationResult  # + not_evaluated CEL rules
    admit(obj, crd, *, old=None, field_validation="Strict") -> Admission  # the stored form, as the API server
    load_crds(paths) -> dict[(group, kind), crd]
    derive_crds(xrd) -> list[crd]           # XR CRD (+ claim CRD), as Crossplane v2.2 derives them
    crd_json_size(crd) -> int
"""

from __future__ import annotations

from .admission import Admission, FieldValidation, admit
from .engine import select_version, validate, validate_object
from .loader import load_crds, load_yaml_documents
from .result import NotEvaluated, ValidationResult, Violation
from .xcrd import XRDError, crd_json_size, derive_crds

__all__ = [
    "Admission",
    "FieldValidation",
    "NotEvaluated",
    "ValidationResult",
    "Violation",
    "XRDError",
    "admit",
    "crd_json_size",
    "derive_crds",
    "load_crds",
    "load_yaml_documents",
    "select_version",
    "validate",
    "validate_object",
]

"""Builds the small hand-written CustomResourceDefinitions the validation tests run against."""

from __future__ import annotations

from typing import Any


def build_crd(
    group: str,
    kind: str,
    plural: str,
    root_schema: dict[str, Any],
    *,
    served: bool = True,
    extra_versions: list[dict[str, Any]] | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """A namespaced ``apiextensions.k8s.io/v1`` CRD whose storage version ``v1`` has ``root_schema``.

    ``root_schema`` is used as is (not copied) as ``openAPIV3Schema``; ``extra_versions`` follow ``v1``.
    ``name`` defaults to ``<plural>.<group>``.
    """
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name if name is not None else f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": served, "storage": True, "schema": {"openAPIV3Schema": root_schema}},
                *(extra_versions or []),
            ],
        },
    }

"""Objects printed as ``-o/--output`` asks: YAML documents, or JSON as kubectl prints it."""

from __future__ import annotations

import json
from typing import Any

from functions.tooling.manifests import dump_documents


def as_json(objects: list[dict[str, Any]]) -> str:
    """kubectl's ``-o json``: one object as itself; several in a ``v1`` ``List`` (``kubectl get -f FILE -o json``
    with several objects); keys sorted and indented by four, as Go's encoder writes them."""
    body: Any = (
        objects[0]
        if len(objects) == 1
        else {
            "apiVersion": "v1",
            "items": objects,
            "kind": "List",
            "metadata": {"resourceVersion": ""},
        }
    )
    return json.dumps(body, indent=4, sort_keys=True, ensure_ascii=False) + "\n"


def format_objects(objects: list[dict[str, Any]], output_format: str) -> str:
    """``objects`` as ``output_format`` (yaml: ``---`` before each, as crossplane render prints them; json)."""
    return as_json(objects) if output_format == "json" else dump_documents(objects)

"""Public API: loading, caching, version handling and speed on a large schema."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fixtures.crdfactory import build_crd
from functions.tooling.validation import ValidationResult, Violation, load_crds, load_yaml_documents, validate
from functions.tooling.validation.compiled import clear_cache, compiled_version
from functions.tooling.validation.schemanode import SchemaNode

DESCRIPTION = "A field description that is long enough to look like the generated ones in real CRDs. " * 3


def _leaf(i: int) -> dict[str, Any]:
    kinds = [
        {"type": "string", "maxLength": 253},
        {"type": "integer", "format": "int32", "minimum": 0},
        {"type": "boolean"},
        {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "atomic"},
        {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
    ]
    return {**kinds[i % len(kinds)], "description": DESCRIPTION}


def _container() -> dict[str, Any]:
    props: dict[str, Any] = {f"field{i}": _leaf(i) for i in range(40)}
    props["name"] = {"type": "string", "description": DESCRIPTION}
    props["image"] = {"type": "string", "description": DESCRIPTION}
    props["env"] = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
        },
    }
    props["resources"] = {
        "type": "object",
        "properties": {
            "limits": {"type": "object", "additionalProperties": _leaf(4)},
            "requests": {"type": "object", "additionalProperties": _leaf(4)},
        },
    }
    return {"type": "object", "required": ["name"], "properties": props}


def _pod_spec() -> dict[str, Any]:
    props: dict[str, Any] = {f"podField{i}": _leaf(i) for i in range(40)}
    props["containers"] = {
        "type": "array",
        "items": {
            **_container(),
            "x-kubernetes-validations": [{"rule": "self.name == 'main' || has(self.image)", "message": "image"}],
        },
    }
    props["initContainers"] = {"type": "array", "items": _container()}
    return {"type": "object", "properties": props}


def big_crd() -> dict[str, Any]:
    component = {
        "type": "object",
        "properties": {
            "replicas": {"type": "integer", "minimum": 0},
            "podSpec": _pod_spec(),
            **{f"variant{i}": _pod_spec() for i in range(20)},
        },
        "x-kubernetes-validations": [{"rule": "self.replicas <= 100"}],
    }
    spec = {
        "type": "object",
        "properties": {"services": {"type": "object", "additionalProperties": component}},
    }
    return build_crd("example.org", "Big", "bigs", {"type": "object", "properties": {"spec": spec}})


def big_object() -> dict[str, Any]:
    def container(name: str) -> dict[str, Any]:
        return {
            "name": name,
            "image": "registry.example.org/some/image:1.2.3",
            "env": [{"name": f"VAR_{i}", "value": f"value-{i}"} for i in range(12)],
            "resources": {"limits": {"cpu": "2", "memory": "8Gi"}, "requests": {"cpu": 1}},
            **{f"field{i}": _value(i) for i in range(10)},
        }

    services = {
        f"worker{n}": {"replicas": 2, "podSpec": {"containers": [container("main"), container("sidecar")]}}
        for n in range(12)
    }
    return {
        "apiVersion": "example.org/v1",
        "kind": "Big",
        "metadata": {"name": "big"},
        "spec": {"services": services},
    }


def _value(i: int) -> Any:
    return ["text", 3, True, ["a", "b"], "50%"][i % 5]


def test_a_large_schema_validates_and_names_each_violation() -> None:
    """A CRD the size of the DGD's: the compiled schema is reused (test below); how fast that is, is the
    benchmark's to say (scripts/bench-cli.py), not a timed test's."""
    crd, obj = big_crd(), big_object()
    assert len(json.dumps(crd)) > 900_000
    assert len(json.dumps(obj)) > 18_000
    assert validate(obj, crd).ok  # first call compiles
    assert validate(obj, crd).ok  # the second reuses it
    bad = copy.deepcopy(obj)
    bad["spec"]["services"]["worker3"]["podSpec"]["containers"][1].pop("image")
    bad["spec"]["services"]["worker5"]["replicas"] = 101
    assert [(v.path, v.message) for v in validate(bad, crd).violations] == [
        ("spec.services.worker3.podSpec.containers[1]", "image"),
        ("spec.services.worker5", "failed rule: self.replicas <= 100"),
    ]


def test_compiled_schemas_are_cached_per_crd_version() -> None:
    crd = big_crd()
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    first = compiled_version("bigs.example.org", "v1", schema)
    assert compiled_version("bigs.example.org", "v1", schema) is first
    # An equal copy (e.g. the CRD loaded again) reuses the compiled schema too.
    assert compiled_version("bigs.example.org", "v1", copy.deepcopy(schema)) is first
    changed = copy.deepcopy(schema)
    changed["properties"]["spec"]["properties"]["extra"] = {"type": "string"}
    assert compiled_version("bigs.example.org", "v1", changed) is not first


def test_validate_returns_a_result_with_sorted_tuples() -> None:
    crd = big_crd()
    obj = big_object()
    obj["spec"]["zzz"] = 1
    obj["spec"]["aaa"] = 1
    result = validate(obj, crd)
    assert isinstance(result, ValidationResult)
    assert result.violations == (
        Violation("spec.aaa", "unknown field", 'unknown field "aaa"'),
        Violation("spec.zzz", "unknown field", 'unknown field "zzz"'),
    )


def test_violation_str() -> None:
    assert str(Violation("spec.a", "type", "must be of type integer, got string")) == (
        "spec.a: must be of type integer, got string (type)"
    )


def test_non_object_and_missing_type_meta() -> None:
    crd = big_crd()
    assert [(v.path, v.rule) for v in validate([], crd).violations] == [("<root>", "type")]  # type: ignore[arg-type]
    assert [(v.path, v.rule) for v in validate({"spec": {}}, crd).violations] == [
        ("apiVersion", "required"),
        ("kind", "required"),
    ]


def test_yaml_loading_keeps_timestamps_as_strings_and_flattens_lists(tmp_path: Path) -> None:
    path = tmp_path / "objs.yaml"
    path.write_text(
        "kind: List\nitems:\n- {kind: A, when: 2024-01-02T03:04:05Z}\n- {kind: B, day: 2024-01-02}\n---\n---\nkind: C\n"
    )
    docs = load_yaml_documents(path)
    assert docs == [
        {"kind": "A", "when": "2024-01-02T03:04:05Z"},
        {"kind": "B", "day": "2024-01-02"},
        {"kind": "C"},
    ]


def test_load_crds_single_file(tmp_path: Path) -> None:
    path = tmp_path / "crd.yaml"
    path.write_text(json.dumps(big_crd()))  # JSON is YAML, and much faster to write
    crds = load_crds(path)
    assert list(crds) == [("example.org", "Big")]
    assert validate(big_object(), crds[("example.org", "Big")]).ok


def _disk_entries(cache: Path) -> list[Path]:
    return sorted((cache / "compiled-schemas").glob("*.pickle"))


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache directory of the test's own, and no compiled schema held in memory before or after."""
    monkeypatch.setenv("FUNCTION_DYNAMO_CACHE", str(tmp_path / "cache"))
    clear_cache()
    yield tmp_path / "cache"
    clear_cache()


def test_a_compiled_schema_is_kept_on_disk_and_read_back_by_the_next_process(own_cache: Path) -> None:
    crd = big_crd()
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    compiled_version("bigs.example.org", "v1", schema)
    (entry,) = _disk_entries(own_cache)
    # What the next process finds is what it uses: an entry whose root closes every field refuses the object.
    node, root = pickle.loads(entry.read_bytes())
    entry.write_bytes(pickle.dumps((node, {**root, "x-closed": frozenset()})))
    clear_cache()
    assert [v.rule for v in validate(big_object(), crd).violations] == ["unknown field"] * 4
    entry.write_bytes(pickle.dumps((node, root)))
    clear_cache()
    assert validate(big_object(), crd).ok


def test_a_schema_tree_read_back_keeps_which_nodes_have_defaults(own_cache: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string", "default": "x"}, "b": {}}}},
    }
    first = compiled_version("defaults.example.org", "v1", schema).node
    clear_cache()
    again = compiled_version("defaults.example.org", "v1", schema).node
    assert again is not first
    spec = again.properties["spec"]
    assert spec.properties["a"].has_default and spec.properties["a"].default == "x"
    assert not spec.properties["b"].has_default
    assert spec.default_below and not again.has_default


def test_a_changed_schema_gets_an_entry_of_its_own(own_cache: Path) -> None:
    schema = big_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    compiled_version("bigs.example.org", "v1", schema)
    changed = copy.deepcopy(schema)
    changed["properties"]["spec"]["properties"]["extra"] = {"type": "string"}
    compiled_version("bigs.example.org", "v1", changed)
    assert len(_disk_entries(own_cache)) == 2


def test_an_entry_that_does_not_load_is_derived_and_written_again(own_cache: Path) -> None:
    crd = big_crd()
    compiled_version("bigs.example.org", "v1", crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    (entry,) = _disk_entries(own_cache)
    entry.write_bytes(b"not a pickle")
    clear_cache()
    assert validate(big_object(), crd).ok
    node, root = pickle.loads(entry.read_bytes())
    assert isinstance(node, SchemaNode) and "x-closed" in root


def test_a_cache_directory_that_cannot_be_written_costs_only_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("FUNCTION_DYNAMO_CACHE", str(blocked))
    clear_cache()
    try:
        crd = big_crd()
        bad = big_object()
        bad["spec"]["zzz"] = 1
        assert [v.path for v in validate(bad, crd).violations] == ["spec.zzz"]
    finally:
        clear_cache()

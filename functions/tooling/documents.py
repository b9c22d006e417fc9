"""Reading manifests as kubectl reads ``-f``: a file, a directory (its ``.yaml``, ``.yml`` and ``.json`` files,
recursively) or ``-`` (standard input), each YAML document with where it is. JSON is read as the YAML it is."""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import yaml

from functions.api.echo import shown
from functions.tooling.input_bounds import (
    InputRefused,
    check_document_size,
    check_value_count,
    check_yaml_document,
    read_limited,
    read_stream_limited,
)

STDIN = Path("-")
STDIN_NAME = "STDIN"  # as kubectl names standard input in its messages
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


class ManifestError(ValueError):
    pass


# libyaml's parser with PyYAML's safe constructors and resolvers: the same documents, about seven times faster
# (the XRDs alone are 1.5 MB of YAML that every command reads).
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class DuplicateKey(yaml.YAMLError):
    """A mapping gives a key twice. PyYAML keeps the last silently; kubectl refuses the manifest."""


class _ManifestLoader(_SAFE_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader, refusing a mapping key given twice as kubectl's YAML decoder does (the same key text;
    a merge key ``<<`` may be overridden), and each document beyond the input bounds before it is built
    (``functions.tooling.input_bounds``: nesting, aliases, numbers)."""

    start_line = 0  # where the document being built starts

    def construct_document(self, node: yaml.Node) -> Any:
        self.start_line = node.start_mark.line + 1
        check_yaml_document(node, self)
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, yaml.Node] = {}
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                    first = seen.setdefault(key_node.value, key_node)
                    if first is not key_node:
                        raise DuplicateKey(
                            f'line {key_node.start_mark.line + 1}: mapping key "{shown(key_node.value)}" '
                            f"already defined at line {first.start_mark.line + 1}"
                        )
        return super().construct_mapping(node, deep)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Document:
    """One YAML document of a file: ``index`` counts every document of the file, an empty one (``value`` None)
    too."""

    file: str  # as given; STDIN_NAME for standard input
    index: int
    value: Any

    @property
    def where(self) -> str:
        return f"{self.file}#{self.index}"


def source_name(path: Path) -> str:
    """How messages name a file: as given, standard input as kubectl names it."""
    return STDIN_NAME if path == STDIN else str(path)


def manifest_files(path: Path) -> list[Path]:
    """``path`` itself, or a directory's manifest files (``MANIFEST_SUFFIXES``, recursively, sorted)."""
    if path == STDIN or not path.is_dir():
        return [path]
    return sorted(p for p in path.rglob("*") if p.suffix in MANIFEST_SUFFIXES and p.is_file())


def file_documents(file: Path) -> list[Document]:
    """Every document of one file (or of standard input), empty ones included; a mapping key given twice, text
    that is not YAML, or a file or document beyond the input bounds is an error naming the file (and the line)."""
    name = source_name(file)
    try:
        data = read_stream_limited(click.get_binary_stream("stdin")) if file == STDIN else read_limited(file)
        check_value_count(data)
        loader = _ManifestLoader(data)
        collecting = gc.isenabled()
        gc.disable()  # a document builds objects by the thousand, none of them in a cycle: nothing to collect
        docs: list[Document] = []
        try:
            while loader.check_data():
                doc = loader.get_data()
                if doc:
                    try:
                        check_document_size(doc)
                    except InputRefused as err:
                        raise InputRefused(f"the document at line {loader.start_line}: {err}") from None
                docs.append(Document(name, len(docs), doc))
        finally:
            loader.dispose()
            if collecting:
                gc.enable()
    except yaml.YAMLError as err:
        raise ManifestError(f"{name}: not valid YAML: {err}") from None
    except InputRefused as err:
        raise ManifestError(f"{name}: {err}") from None
    return docs


def read_documents(path: Path) -> list[Document]:
    """``file_documents`` of every manifest file of ``path`` (``manifest_files``)."""
    return [doc for file in manifest_files(path) for doc in file_documents(file)]


def located_documents(path: Path) -> list[tuple[str, Any]]:
    """The non-empty documents of ``path``, each with where it is: ``FILE#index``, as ``validate`` names it."""
    return [(doc.where, doc.value) for doc in read_documents(path) if doc.value]


def load_documents(path: Path) -> list[dict[str, Any]]:
    """Every non-empty document of a file or directory (``read_documents``)."""
    return [doc for _, doc in located_documents(path)]


def checked_objects(path: Path, check: Callable[[Any], None]) -> list[dict[str, Any]]:
    """``load_documents``, each document passed to ``check`` (``functions.tooling.input_bounds``): what it
    refuses is an error naming the file, the document and the field."""
    docs = []
    for where, doc in located_documents(path):
        try:
            check(doc)
        except InputRefused as err:
            raise ManifestError(f"{where}: {err}") from None
        docs.append(doc)
    return docs

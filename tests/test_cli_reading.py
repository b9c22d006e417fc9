"""`validate` and `render` read manifests as kubectl reads -f: every skipped document says where it is, its kind
and why (with a "did you mean" for a near miss of one of our kinds), directories include .json, and - is
standard input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fixtures.tooling import REPO

AGG = (REPO / "examples" / "dgd" / "vllm-agg.yaml").read_text()  # a valid DynamoGraphDeployment, vllm-agg
NOTHING = (
    "function-dynamo validate: nothing to check: no document is one of this package's kinds (DynamoCheckpoint, "
    "DynamoComponentDeployment, DynamoGraphDeployment, DynamoGraphDeploymentRequest, "
    "DynamoGraphDeploymentScalingAdapter, DynamoModel, DynamoPlatform)\n"
)


def cli(cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "functions.tooling.main", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


# file content -> the line validate prints for it (the file is m.yaml); each is skipped, so nothing is checked
SKIPPED = {
    "a ConfigMap": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n",
        "skip m.yaml#0 ConfigMap/other: not a Dynamo kind",
    ),
    "a misspelt kind": (
        AGG.replace("kind: DynamoGraphDeployment", "kind: DynamoGraphDeploymnet"),
        "skip m.yaml#0 DynamoGraphDeploymnet/vllm-agg: not a Dynamo kind; did you mean DynamoGraphDeployment?",
    ),
    "a kind in lower case": (
        AGG.replace("kind: DynamoGraphDeployment", "kind: dynamographdeployment"),
        "skip m.yaml#0 dynamographdeployment/vllm-agg: not a Dynamo kind; did you mean DynamoGraphDeployment?",
    ),
    "a plural kind": (
        "apiVersion: nvidia.com/v1alpha1\nkind: DynamoModels\nmetadata: {name: m}\n",
        "skip m.yaml#0 DynamoModels/m: not a Dynamo kind; did you mean DynamoModel?",
    ),
    "our kind in another group": (
        AGG.replace("apiVersion: nvidia.com/v1beta1", "apiVersion: apps/v1"),
        "skip m.yaml#0 DynamoGraphDeployment/vllm-agg: apiVersion 'apps/v1' is not in group nvidia.com; "
        "did you mean nvidia.com/v1beta1?",
    ),
    "our kind without an apiVersion": (
        "kind: DynamoCheckpoint\nmetadata: {name: c}\n",
        "skip m.yaml#0 DynamoCheckpoint/c: no apiVersion; did you mean nvidia.com/v1alpha1?",
    ),
    "an empty file": ("", "skip m.yaml: empty file"),
    "a file of comments": ("# nothing here\n", "skip m.yaml: empty file"),
    "a top-level list": ("- apiVersion: v1\n  kind: ConfigMap\n", "skip m.yaml#0: a list, not an object"),
    "a string": ("hello\n", "skip m.yaml#0: a string, not an object"),
    "no kind": ("apiVersion: v1\nmetadata: {name: x}\n", "skip m.yaml#0: no kind"),
    "an empty object": ("{}\n", "skip m.yaml#0: no kind"),
    "an empty document": ("---\n", "skip m.yaml#0: empty document"),
}


@pytest.mark.parametrize(("content", "line"), SKIPPED.values(), ids=SKIPPED.keys())
def test_a_skipped_document_says_where_its_kind_and_why(tmp_path: Path, content: str, line: str) -> None:
    (tmp_path / "m.yaml").write_text(content)
    proc = cli(tmp_path, "validate", "m.yaml")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1,
        f"{line}\n0 valid, 0 invalid, 1 other document skipped\n",
        NOTHING,
    )


@pytest.mark.parametrize(("content", "line"), SKIPPED.values(), ids=SKIPPED.keys())
def test_render_skips_the_same_documents_saying_why(tmp_path: Path, content: str, line: str) -> None:
    (tmp_path / "m.yaml").write_text(content)
    proc = cli(tmp_path, "render", "m.yaml")
    kinds = NOTHING.split("kinds ", 1)[1].strip()
    why = "it is empty" if line.endswith(": empty file") else "1 other document skipped"
    skipped = "" if line.endswith(": empty file") else f"function-dynamo render: skipped {line.removeprefix('skip ')}\n"
    error = f"function-dynamo render: m.yaml: no claim or XR this package serves {kinds}; {why}\n"
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", skipped + error)


def directory(tmp_path: Path) -> Path:
    """A directory as a user's manifests are: a graph in YAML and one in JSON, a ConfigMap, a misspelt kind, a file
    ending in --- (an empty document), an empty file and a top-level list; and a text file validate does not read."""
    root = tmp_path / "manifests"
    (root / "json").mkdir(parents=True)
    (root / "agg.yaml").write_text(AGG + "---\n")
    doc = yaml.safe_load(AGG)
    doc["metadata"]["name"] = "from-json"
    (root / "json" / "agg.json").write_text(json.dumps(doc, indent=2))
    (root / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n")
    (root / "typo.yml").write_text(AGG.replace("kind: DynamoGraphDeployment", "kind: DynamoGraphDeploymnet"))
    (root / "empty.yaml").write_text("")
    (root / "list.yaml").write_text("- a\n- b\n")
    (root / "notes.txt").write_text("kind: [not read\n")
    return root


# -v and -o json add to the text report: (options, stdout)
REPORTS = {
    "text": (
        (),
        "skip manifests/empty.yaml: empty file\n"
        "skip manifests/list.yaml#0: a list, not an object\n"
        "skip manifests/typo.yml#0 DynamoGraphDeploymnet/vllm-agg: not a Dynamo kind; did you mean "
        "DynamoGraphDeployment?\n"
        "2 valid, 0 invalid, 5 other documents skipped (-v lists them)\n",
    ),
    "verbose": (
        ("-v",),
        "ok   manifests/agg.yaml#0 DynamoGraphDeployment/vllm-agg\n"
        "ok   manifests/json/agg.json#0 DynamoGraphDeployment/from-json\n"
        "skip manifests/agg.yaml#1: empty document\n"
        "skip manifests/cm.yaml#0 ConfigMap/other: not a Dynamo kind\n"
        "skip manifests/empty.yaml: empty file\n"
        "skip manifests/list.yaml#0: a list, not an object\n"
        "skip manifests/typo.yml#0 DynamoGraphDeploymnet/vllm-agg: not a Dynamo kind; did you mean "
        "DynamoGraphDeployment?\n"
        "2 valid, 0 invalid, 5 other documents skipped\n",
    ),
}


@pytest.mark.parametrize(("options", "stdout"), REPORTS.values(), ids=REPORTS.keys())
def test_a_directory_is_read_with_its_json_and_every_skip_reported(tmp_path: Path, options: tuple, stdout: str) -> None:
    directory(tmp_path)
    proc = cli(tmp_path, "validate", "manifests", *options)
    out = "".join(line + "\n" for line in proc.stdout.splitlines() if not line.startswith("  note: "))
    assert (proc.returncode, out, proc.stderr) == (0, stdout, "")


def test_output_json_lists_every_skipped_document(tmp_path: Path) -> None:
    directory(tmp_path)
    proc = cli(tmp_path, "validate", "manifests", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert [(d["file"], d["index"], d["name"], d["valid"]) for d in report["documents"]] == [
        ("manifests/agg.yaml", 0, "vllm-agg", True),
        ("manifests/json/agg.json", 0, "from-json", True),
    ]
    assert report["skippedDocuments"] == [
        {"file": "manifests/agg.yaml", "index": 1, "kind": None, "name": None, "reason": "empty document",
         "didYouMean": None},
        {"file": "manifests/cm.yaml", "index": 0, "kind": "ConfigMap", "name": "other", "reason": "not a Dynamo kind",
         "didYouMean": None},
        {"file": "manifests/empty.yaml", "index": None, "kind": None, "name": None, "reason": "empty file",
         "didYouMean": None},
        {"file": "manifests/list.yaml", "index": 0, "kind": None, "name": None, "reason": "a list, not an object",
         "didYouMean": None},
        {"file": "manifests/typo.yml", "index": 0, "kind": "DynamoGraphDeploymnet", "name": "vllm-agg",
         "reason": "not a Dynamo kind", "didYouMean": "DynamoGraphDeployment"},
    ]  # fmt: skip
    assert {k: report[k] for k in ("valid", "invalid", "skipped")} == {"valid": 2, "invalid": 0, "skipped": 5}


# - reads standard input: (arguments, standard input, exit code, stdout, stderr)
STDIN = {
    "validate -": (
        ("validate", "-", "-v"),
        AGG,
        0,
        "ok   STDIN#0 DynamoGraphDeployment/vllm-agg\n1 valid, 0 invalid, 0 other documents skipped\n",
        "",
    ),
    "validate - among files": (
        ("validate", "cm.yaml", "-"),
        "apiVersion: v1\nkind: DynamoGraphDeploymnet\n",
        1,
        "skip cm.yaml#0 ConfigMap/other: not a Dynamo kind\n"
        "skip STDIN#0 DynamoGraphDeploymnet/?: not a Dynamo kind; did you mean DynamoGraphDeployment?\n"
        "0 valid, 0 invalid, 2 other documents skipped\n",
        NOTHING,
    ),
    "validate - that is not YAML": (
        ("validate", "-"),
        "kind: [unclosed\n",
        1,
        "FAIL STDIN\n  not valid YAML: while parsing a flow sequence\n"
        '    in "<byte string>", line 1, column 7\n'
        "  did not find expected ',' or ']'\n"
        '    in "<byte string>", line 2, column 1\n'
        "0 valid, 1 invalid, 0 other documents skipped\n",
        "",
    ),
    "validate - twice": (
        ("validate", "-", "-"),
        AGG,
        2,
        "",
        "Usage: function-dynamo validate [OPTIONS] FILES...\n"
        "Try 'function-dynamo validate --help' for help.\n\n"
        "Error: standard input (-) can be read once: give - once\n",
    ),
    "render - of nothing": (
        ("render", "-"),
        "",
        1,
        "",
        "function-dynamo render: STDIN: no claim or XR this package serves (DynamoCheckpoint, "
        "DynamoComponentDeployment, DynamoGraphDeployment, DynamoGraphDeploymentRequest, "
        "DynamoGraphDeploymentScalingAdapter, DynamoModel, DynamoPlatform); it is empty\n",
    ),
}


@pytest.mark.parametrize(("args", "stdin", "code", "stdout", "stderr"), STDIN.values(), ids=STDIN.keys())
def test_dash_reads_standard_input(
    tmp_path: Path, args: tuple, stdin: str, code: int, stdout: str, stderr: str
) -> None:
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n")
    proc = cli(tmp_path, *args, stdin=stdin)
    out = "".join(line + "\n" for line in proc.stdout.splitlines() if not line.startswith("  note: "))
    assert (proc.returncode, out, proc.stderr) == (code, stdout, stderr)


def test_render_dash_renders_standard_input_as_the_file(tmp_path: Path) -> None:
    from_file = cli(REPO, "render", "examples/dgd/vllm-agg.yaml")
    from_stdin = cli(tmp_path, "render", "-", stdin=AGG)
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert from_stdin.stdout == from_file.stdout

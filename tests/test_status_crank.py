"""The real `crossplane render` with observed and required resources equals the in-process render.

Also the one place the in-process runner had to follow crank: required resources are fetched
without regard to the selector's namespace, as crank's FilteringFetcher does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from fixtures.corpus import load_claim, status_example_xr
from fixtures.tooling import REPO, crank_render
from functions.fn import run
from functions.tooling.manifests import claim_to_xr, dump_documents, find_composition, load_documents
from functions.tooling.pipeline import fetch, render

STATUS_EXAMPLES = REPO / "tests" / "scenarios" / "status"
EXAMPLES = sorted(p for p in STATUS_EXAMPLES.iterdir() if p.is_dir())


def write(path: Path, doc: dict) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_crank_render_with_observed_and_required_equals_in_process(
    example: Path, functions_file: Path, tmp_path: Path
) -> None:
    xr = status_example_xr(example)
    composition = find_composition(xr, load_documents(REPO / "compositions"))
    observed, required = example / "observed.yaml", example / "required.yaml"
    # The component pathway reads no required resources: those examples have no required.yaml.
    extra = ["-e", str(required)] if required.exists() else []
    theirs = crank_render(
        str(write(tmp_path / "xr.yaml", xr)),
        str(write(tmp_path / "composition.yaml", composition)),
        str(functions_file),
        "-o",
        str(observed),
        *extra,
    )
    out = render(xr, composition, load_documents(observed), load_documents(required) if extra else [], converge=False)
    text = dump_documents([out.composite, *out.composed])
    ours = list(yaml.safe_load_all(text))
    assert ours == list(yaml.safe_load_all(theirs))
    assert text == theirs  # byte for byte, long condition messages folded as Go folds them
    status = ours[0]["status"]
    assert status["state"] == ("successful" if example.name.endswith("-ready") else "pending")
    assert "DynamoGraphReady" in {c["type"] for c in status["conditions"]}


def test_fetch_ignores_the_selector_namespace_like_crank() -> None:
    selector = fnv1.ResourceSelector(api_version="v1", kind="ConfigMap", namespace="team-a")
    selector.match_labels.labels["app"] = "x"
    objs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n, "namespace": ns, "labels": {"app": "x"}}}
        for n, ns in (("b", "team-b"), ("a", "team-a"))
    ]
    assert [r.resource["metadata"]["name"] for r in fetch(selector, objs).items] == ["a", "b"]
    by_name = fnv1.ResourceSelector(api_version="v1", kind="ConfigMap", namespace="team-a", match_name="b")
    assert [r.resource["metadata"]["namespace"] for r in fetch(by_name, objs).items] == ["team-b"]


def test_crank_fetches_required_resources_across_namespaces(functions_file: Path, tmp_path: Path) -> None:
    """A PodClique of the same PodCliqueSet name in another namespace reaches the function in both renders;
    the step itself keeps to the claim's namespace, so the result is still the ready one."""
    example = STATUS_EXAMPLES / "vllm-agg-ready"
    xr = claim_to_xr(load_claim(REPO / "examples" / "dgd" / "vllm-agg.yaml"))
    composition = find_composition(xr, load_documents(REPO / "compositions"))
    required = load_documents(example / "required.yaml")
    decoy = yaml.safe_load(yaml.safe_dump(required[0]))
    decoy["metadata"]["namespace"] = "elsewhere"
    decoy["status"]["readyReplicas"] = 0
    docs = [decoy, *required]
    required_file = tmp_path / "required.yaml"
    required_file.write_text("".join("---\n" + yaml.safe_dump(d) for d in docs))

    seen: list[int] = []

    def counting_runner(req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        if "grove-podcliques" in req.required_resources:
            seen.append(len(req.required_resources["grove-podcliques"].items))
        return run(req)

    out = render(
        xr, composition, load_documents(example / "observed.yaml"), docs, runner=counting_runner, converge=False
    )
    assert seen == [len(required) + 1]  # the decoy is passed along, as crank does
    theirs = crank_render(
        str(write(tmp_path / "xr.yaml", xr)),
        str(write(tmp_path / "composition.yaml", composition)),
        str(functions_file),
        "-o",
        str(example / "observed.yaml"),
        "-e",
        str(required_file),
    )
    ours = list(yaml.safe_load_all(dump_documents([out.composite, *out.composed])))
    assert ours == list(yaml.safe_load_all(theirs))
    assert ours[0]["status"]["state"] == "successful"

"""spec.pvcs: created once when create is true, never modified after; a missing create: false claim is reported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from fixtures.tooling import REPO, crank_render
from functions.tooling.manifests import claim_to_xr, dump_documents, find_composition, load_documents
from functions.tooling.pipeline import RESOURCE_NAME_ANNOTATION, RenderError, render

COMPOSITION = load_documents(REPO / "compositions")


def claim(pvcs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {
            "pvcs": pvcs,
            "services": {
                "W": {
                    "componentType": "worker",
                    "volumeMounts": [{"name": "cache", "mountPoint": "/c"}],
                    "extraPodSpec": {"mainContainer": {"image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"}},
                }
            },
        },
    }


CREATE = {"name": "cache", "create": True, "size": "10Gi", "storageClass": "fast", "volumeAccessMode": "ReadWriteOnce"}


def rendered(doc: dict[str, Any], **kwargs: Any) -> list[dict[str, Any]]:
    xr = claim_to_xr(doc)
    return render(xr, find_composition(xr, COMPOSITION), **kwargs).composed


def pvcs_of(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == "PersistentVolumeClaim"]


def test_create_true_composes_the_claim() -> None:
    (pvc,) = pvcs_of(rendered(claim([CREATE])))
    assert pvc["metadata"]["name"] == "cache"
    assert pvc["metadata"]["namespace"] == "ns"
    assert pvc["spec"] == {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "10Gi"}},
        "storageClassName": "fast",
    }
    kubernetes_validate.validate(pvc, "1.33", strict=True)


def test_an_existing_claim_is_never_modified() -> None:
    (first,) = pvcs_of(rendered(claim([CREATE])))
    bigger = {**CREATE, "size": "50Gi", "storageClass": "slow"}
    (again,) = pvcs_of(rendered(claim([bigger]), observed=[first]))
    assert again["spec"] == first["spec"]
    assert again["metadata"]["annotations"][RESOURCE_NAME_ANNOTATION] == "pvc-cache"


def test_missing_claim_with_create_false_is_reported_not_created() -> None:
    with pytest.raises(RenderError, match=r"spec\.pvcs\[0\]: PersistentVolumeClaim ns/cache does not exist"):
        rendered(claim([{"name": "cache", "create": False}]))


def test_existing_claim_with_create_false_is_used_not_composed() -> None:
    existing = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "cache", "namespace": "ns"}}
    objects = rendered(claim([{"name": "cache"}]), required=[existing])
    assert pvcs_of(objects) == []
    pcs = next(o for o in objects if o["kind"] == "PodCliqueSet")
    volumes = pcs["spec"]["template"]["cliques"][0]["spec"]["podSpec"]["volumes"]
    assert {"name": "cache", "persistentVolumeClaim": {"claimName": "cache"}} in volumes


def test_crank_looks_the_claim_up_the_same_way(functions_file: Path, tmp_path: Path) -> None:
    existing = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "cache", "namespace": "ns"}}
    doc = claim([{"name": "cache", "create": False}])
    xr = claim_to_xr(doc)
    (tmp_path / "xr.yaml").write_text(yaml.safe_dump(xr))
    (tmp_path / "required.yaml").write_text(yaml.safe_dump(existing))
    composition = find_composition(xr, COMPOSITION)
    (tmp_path / "composition.yaml").write_text(yaml.safe_dump(composition))
    theirs = crank_render(
        str(tmp_path / "xr.yaml"), str(tmp_path / "composition.yaml"), str(functions_file),
        "-e", str(tmp_path / "required.yaml"),
    )  # fmt: skip
    ours = render(xr, composition, required=[existing], converge=False)
    assert dump_documents([ours.composite, *ours.composed]) == theirs

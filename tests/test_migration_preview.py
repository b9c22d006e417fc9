"""Where a workload's pod templates are, where two differ, and what a person reads (``migrate release --dry-run``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from functions.tooling.migration_preview import (
    UNKNOWN_REASON,
    GraphPreview,
    clashes,
    differences,
    pod_templates,
    reason_for,
    template_changes,
)

POD = {"spec": {"containers": [{"name": "main", "image": "a", "env": [{"name": "X", "value": "1"}]}]}}


def deployment(pod: Any = POD, replicas: int = 1) -> dict[str, Any]:
    return {"kind": "Deployment", "spec": {"replicas": replicas, "template": copy.deepcopy(pod)}}


def pcs(pod_spec: Any, labels: dict[str, str] | None = None) -> dict[str, Any]:
    clique = {"name": "worker-ldr", "labels": labels or {}, "spec": {"replicas": 1, "podSpec": pod_spec}}
    return {"kind": "PodCliqueSet", "spec": {"replicas": 1, "template": {"cliques": [clique]}}}


@pytest.mark.parametrize(
    ("obj", "paths"),
    [
        (deployment(), ["spec.template"]),
        ({"kind": "Service", "spec": {"ports": []}}, []),
        (
            {"kind": "LeaderWorkerSet", "spec": {"leaderWorkerTemplate": {"leaderTemplate": {}, "workerTemplate": {}}}},
            ["spec.leaderWorkerTemplate.leaderTemplate", "spec.leaderWorkerTemplate.workerTemplate"],
        ),
        (
            pcs({}),
            [
                "spec.template.cliques[worker-ldr].spec.podSpec",
                "spec.template.cliques[worker-ldr].labels",
                "spec.template.cliques[worker-ldr].annotations",
            ],
        ),
    ],
)
def test_pod_templates_are_found_by_kind(obj: dict[str, Any], paths: list[str]) -> None:
    assert list(pod_templates(obj)) == paths


def test_named_lists_are_compared_by_name_not_position() -> None:
    before = [{"name": "a", "value": "1"}, {"name": "b", "value": "2"}]
    after = [{"name": "b", "value": "2"}, {"name": "a", "value": "1"}, {"name": "c", "value": "3"}]
    assert differences(before, after, "env") == ["env[c]"]
    assert differences([1, 2], [1, 3], "args") == ["args[1]"]
    assert differences([1, 2], [1], "args") == ["args"]


def test_only_template_changes_count_not_replicas() -> None:
    assert template_changes(deployment(replicas=1), deployment(replicas=3)) == []
    changed = copy.deepcopy(POD)
    changed["spec"]["containers"][0]["env"][0]["value"] = "2"
    assert template_changes(deployment(), deployment(changed)) == ["spec.template.spec.containers[main].env[X].value"]


def test_a_clique_label_is_a_template_change() -> None:
    assert template_changes(pcs({}), pcs({}, {"team": "a"})) == ["spec.template.cliques[worker-ldr].labels.team"]


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("spec.template.cliques[worker-ldr].spec.podSpec.containers[main].args[0]", "multinode helper scripts"),
        ("spec.template.cliques[w].spec.podSpec.volumes[mpi-run-ssh-secret].secret", "per-graph copy"),
        ("spec.template.metadata.labels.nvidia.com/dynamo-worker-hash", "worker hash"),
        ("spec.template.spec.containers[main].image", UNKNOWN_REASON),
    ],
)
def test_known_differences_say_why(path: str, fragment: str) -> None:
    assert fragment in reason_for(path)


def test_what_a_person_reads() -> None:
    kept = GraphPreview("DynamoGraphDeployment/ns/a", unchanged=["Deployment/a-frontend"])
    assert not kept.restarts
    assert kept.lines() == [
        "DynamoGraphDeployment/ns/a: moves without a restart (1 workload(s) keep their pod templates)"
    ]
    paths = [f"spec.template.spec.containers[main].args[{i}]" for i in range(6)]
    rolling = GraphPreview("DynamoGraphDeployment/ns/b", changed={"PodCliqueSet/b": paths})
    assert rolling.restarts
    text = "\n".join(rolling.lines())
    assert "would restart 1 workload(s)" in text and "PodCliqueSet/b" in text and "(+2 more)" in text
    refused = GraphPreview("DynamoGraphDeployment/ns/c", refused="spec.components: Required value")
    assert refused.restarts and "cannot move" in refused.lines()[0]


def test_two_mounts_at_one_path_keep_pods_from_starting() -> None:
    mounts = [
        {"name": "mpi-run-ssh-secret", "mountPath": "/ssh-pk"},
        {"name": "g-mpi-run-ssh-secret", "mountPath": "/ssh-pk"},
    ]
    pod = {"containers": [{"name": "main", "volumeMounts": mounts}]}
    assert clashes(pcs(pod)) == [
        "container main: volume mounts mpi-run-ssh-secret and g-mpi-run-ssh-secret both at /ssh-pk"
    ]
    assert clashes(deployment({"spec": pod}))
    assert clashes(deployment()) == []
    preview = GraphPreview(
        "DynamoGraphDeployment/ns/d", changed={"PodCliqueSet/d": ["x"]}, broken={"PodCliqueSet/d": ["y"]}
    )
    assert "would not start (y)" in "\n".join(preview.lines())

"""`function-dynamo validate` gives the upstream operator's verdicts, document by document.

The oracle is the running operator (``upstream_operator``): its CRDs and its validating and defaulting webhooks,
asked with a server-side dry-run create (an update of the row's ``old``, for transition rules) with strict field
validation as ``kubectl apply`` asks. Each document of the corpus, of the validation catalogue and of the
mutation set (``test_apiserver_mutations``) is also given to ``validate_document`` (what ``function-dynamo
validate`` runs: our CRD's schema and CEL, then the function's own rules) under the operator's own
configuration. Both accept, or both refuse naming a field in common; ``KNOWN_DISAGREEMENTS`` lists the cases
that cannot agree, each with the row of docs/deviations.md that says why.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures.catalogue import CATALOGUE, claim
from fixtures.corpus import as_upstream_admits
from fixtures.differential_compare import deviation_rows
from fixtures.mutations import mutations
from functions.tooling.offline_validation import validate_document
from harness.apiserver import ensure_namespace, resource_path
from harness.apiserver import plural as plural_of
from harness.controlplane import APIError, ControlPlane
from harness.differential import platform_config
from harness.operator_stack import OperatorStack
from harness.verdicts import NAMESPACE, as_claim, corpus_claims, normalise, server_paths, server_verdict

Obj = dict[str, Any]
REPO = Path(__file__).resolve().parents[1]
RELEASED_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0"
# Classes of cases on which the two cannot agree: the cases (a regular expression), each side's verdict, and the
# row of docs/deviations.md (a unique fragment of it) that says why.
KNOWN_DISAGREEMENTS: list[dict[str, str]] = [
    {
        "case": r"^mutation .*=(null|empty)$",
        "operator": "accepts",
        "ours": "refuses",
        "deviation": "A `null` item or an empty object where a component's fields need a value",
    },
    {  # the operator turns the null into a zero value first, then refuses what that value means elsewhere
        "case": r"^mutation .*\.(gpuMemoryService(\.enabled)?|tolerations\.\d+|hostPath(\.path)?)=(null|empty)$",
        "operator": "refuses",
        "ours": "refuses",
        "deviation": "A `null` item or an empty object where a component's fields need a value",
    },
    {
        "case": r"^catalogue (pvc-size-positive|failover-vllm-only|backend-detection-mismatch)$",
        "operator": "accepts",
        "ours": "refuses",
        "deviation": "A graph upstream admits but cannot deploy",
    },
    {
        "case": r"^catalogue dgdr-concurrency-or-request-rate$",
        "operator": "accepts",
        "ours": "refuses",
        "deviation": "both `workload.concurrency` and `workload.requestRate`",
    },
]
_INDEX = re.compile(r"\[(\d+)\]")
# A conversion webhook's decoding error: the API server answers 500, naming the Go field.
_GO_FIELD = re.compile(r"Go struct field \w+\.((?:spec|metadata)[\w.]*)")


def applied(stored: Any, old: Any, new: Any) -> Any:
    """What ``kubectl apply`` of ``new`` sends over ``stored`` when ``old`` was applied before: the fields ``new``
    sets, ``stored``'s others (a defaulting webhook's) kept, the fields only ``old`` set dropped."""
    if not (isinstance(stored, dict) and isinstance(new, dict)):
        return copy.deepcopy(new)
    old = old if isinstance(old, dict) else {}
    out = {k: copy.deepcopy(v) for k, v in stored.items() if k in new or k not in old}
    for key, value in new.items():
        out[key] = applied(stored.get(key), old.get(key), value)
    return out


def operator_verdict(cp: ControlPlane, obj: Obj, old: Obj | None) -> set[str] | None:
    """None when the operator's stack admits ``obj`` (a dry run; for a transition rule, ``old`` is created and
    ``obj`` applied over it as ``kubectl apply`` would), else the field paths its refusal names (``{""}``: none).
    A request its conversion webhook cannot decode is refused too: the API server answers 500 for it."""
    try:
        if old is None:
            return server_verdict(cp, obj, None)
        collection = resource_path("nvidia.com", obj["apiVersion"].split("/")[1], plural_of(obj["kind"]), NAMESPACE)
        stored = cp.client.request("POST", collection, old, params={"fieldValidation": "Strict"})
        try:
            update = applied(stored, old, obj)
            update["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
            cp.client.request(
                "PUT",
                f"{collection}/{obj['metadata']['name']}",
                update,
                params={"dryRun": "All", "fieldValidation": "Strict"},
            )
            return None
        finally:
            cp.client.delete(f"{collection}/{obj['metadata']['name']}")
    except APIError as err:
        message = str(err.status.get("message", ""))
        if err.code < 500:
            return server_paths(err)
        if "conversion webhook" not in message:
            raise
        return {normalise(f) for f in _GO_FIELD.findall(message)} or {""}


def offline_verdict(obj: Obj, old: Obj | None, config: Obj) -> set[str] | None:
    """None when ``validate`` accepts ``obj``, else the normalised field paths its violations name."""
    report = validate_document(obj, "case", old=old, operator_config=[config])
    if report.ok:
        return None
    return {normalise(v.split(": ", 1)[0]) if ": " in v else "" for v in report.violations}


_GO_EMBEDDED = re.compile(r"\.[A-Z]\w*(?=\.|$)")
_COMPONENT = re.compile(r"^spec\.(?:services\.[^.]+|components\.\d+)\.(?:experimental\.)?(.*)$")
_COMPONENT_ROOT = re.compile(r"^spec\.(?:services\.[^.]+|components\.\d+)$")
_MAIN_MOUNT = re.compile(r"^spec\.\*\.podTemplate\.spec\.containers\.\d+\.volumeMounts\.(\d+)\.mountPath$")
_MAIN_MOUNT_ITEM = re.compile(r"^spec\.\*\.podTemplate\.spec\.containers\.\d+\.volumeMounts\.(\d+)$")
_LIST_INDEX = re.compile(r"\.\d+(?=\.|$)")
_UNKEYED = re.compile(r"^spec\.services\.(.*)$")


def field_forms(path: str) -> set[str]:
    """The spellings one field may have in either verdict: as named; without a Go decoder's embedded struct names
    (``PodSpec``, ``ProbeHandler``); and relative to its component (``spec.*.``), since the operator validates a
    v1alpha1 graph converted to v1beta1 (``spec.components[0].experimental.checkpoint`` for
    ``spec.services.a.checkpoint``) and its decoder names map fields without their key."""
    path = _INDEX.sub(".\\1", _GO_EMBEDDED.sub("", path))
    forms = {path}
    for pattern in (_COMPONENT, _UNKEYED):
        match = pattern.match(path)
        if match:
            forms.add("spec.*." + match.group(1))
    if _COMPONENT_ROOT.match(path):  # the component as a whole
        forms.add("spec.*")
    # A v1beta1 main container's volume mount, as the v1alpha1 view the operator also validates names it.
    forms |= {_MAIN_MOUNT.sub(r"spec.*.volumeMounts.\1.mountPoint", f) for f in forms}
    forms |= {_MAIN_MOUNT_ITEM.sub(r"spec.*.volumeMounts.\1", f) for f in forms}
    return forms | {_LIST_INDEX.sub("", f) for f in forms}  # a decoder names list fields without their index


@pytest.mark.parametrize(
    ("operator", "ours"),
    [
        (
            "spec.services.extraPodSpec.PodSpec.affinity.podAffinity.x.weight",
            "spec.services.W.extraPodSpec.affinity.podAffinity.x[0].weight",
        ),
        ("spec.components[0].experimental.checkpoint", "spec.services.a.checkpoint"),
        ("spec.components[0].multinode", "spec.services.e"),
        (
            "spec.services.T.volumeMounts[0].mountPoint",
            "spec.components[1].podTemplate.spec.containers[0].volumeMounts[0].mountPath",
        ),
        ("spec.restart.strategy.order", "spec.restart.strategy.order[1]"),
        (
            "spec.services.T.volumeMounts[0].mountPoint",
            "spec.components[1].podTemplate.spec.containers[0].volumeMounts[0]",
        ),
    ],
)
def test_spellings_of_one_field_are_the_same_field(operator: str, ours: str) -> None:
    assert _same_field(operator, ours)


@pytest.mark.parametrize(
    ("operator", "ours"),
    [("spec.components[0].replicas", "spec.components[0].multinode"), ("spec.pvcs[0].name", "spec.pvcs[0].size")],
)
def test_other_fields_are_not(operator: str, ours: str) -> None:
    assert not _same_field(operator, ours)


def _same_field(a: str, b: str) -> bool:
    """Two spellings of one field: equal, or one inside the other (a webhook may name the list, a schema the item)."""
    return any(x == y or x.startswith(y + ".") or y.startswith(x + ".") for x in field_forms(a) for y in field_forms(b))


def agree(operator: set[str] | None, ours: set[str] | None) -> bool:
    """Both accept, or both refuse naming a field in common (any field, where the operator names none)."""
    if operator is None or ours is None:
        return operator is None and ours is None
    return operator == {""} or any(_same_field(a, b) for a in operator for b in ours)


def with_main_images(doc: Obj) -> Obj:
    """``doc`` with a main container image (of a released version) on each component that has no image key at all:
    the catalogue's examples name only the fields their rule is about, and the operator refuses any component
    without one before it looks further."""
    out = copy.deepcopy(doc)
    spec = out.get("spec") if isinstance(out.get("spec"), dict) else {}
    services = spec.get("services") if isinstance(spec.get("services"), dict) else {}
    for component in services.values():
        if isinstance(component, dict):
            main = component.setdefault("extraPodSpec", {}).setdefault("mainContainer", {})
            if isinstance(main, dict):
                main.setdefault("image", RELEASED_IMAGE)
    components = spec.get("components") if isinstance(spec.get("components"), list) else []
    for component in components:
        if isinstance(component, dict):
            pod = component.setdefault("podTemplate", {}).setdefault("spec", {})
            containers = pod.setdefault("containers", []) if isinstance(pod, dict) else None
            if isinstance(containers, list) and not any(
                isinstance(c, dict) and c.get("name") == "main" for c in containers
            ):
                containers.insert(0, {"name": "main", "image": RELEASED_IMAGE})
    return out


def catalogue_as_upstream_admits(doc: Obj) -> Obj:
    return as_upstream_admits(with_main_images(doc))


def _named(obj: Obj, name: str) -> Obj:
    return {**obj, "metadata": {**obj["metadata"], "name": name}}


def known(case: str, operator: set[str] | None, ours: set[str] | None) -> bool:
    verdicts = {
        "operator": "accepts" if operator is None else "refuses",
        "ours": "accepts" if ours is None else "refuses",
    }
    return any(
        re.search(k["case"], case) and k["operator"] == verdicts["operator"] and k["ours"] == verdicts["ours"]
        for k in KNOWN_DISAGREEMENTS
    )


def test_an_update_is_applied_over_what_the_webhook_stored() -> None:
    stored = {
        "metadata": {"annotations": {"set-by-webhook": "x"}},
        "spec": {"services": {"a": {"minAvailable": 1, "replicas": 2}}, "restart": {"id": "r1"}},
    }
    old = {"metadata": {}, "spec": {"services": {"a": {"replicas": 2}}, "restart": {"id": "r1"}}}
    new = {"metadata": {}, "spec": {"services": {"a": {"replicas": 3}}}}
    assert applied(stored, old, new) == {
        "metadata": {"annotations": {"set-by-webhook": "x"}},
        "spec": {"services": {"a": {"minAvailable": 1, "replicas": 3}}},
    }


def test_every_known_disagreement_is_a_deviation_row() -> None:
    rows = deviation_rows()
    for entry in KNOWN_DISAGREEMENTS:
        assert len([r for r in rows if entry["deviation"] in r]) == 1, entry


def cases() -> list[tuple[str, Obj, Obj | None]]:
    out: list[tuple[str, Obj, Obj | None]] = []
    for i, (where, doc) in enumerate(corpus_claims()):
        out.append((f"corpus {where}", as_claim(doc, f"corpus-{i}"), None))
    for row in CATALOGUE:
        if row["enforced_by"] == "not-enforced":
            continue
        # A row about the main image or the runtime version itself keeps its example as written.
        as_written = any(p in row["expect"]["path"] for p in ("image", "containers", "runtimeVersionOverride"))
        admitted = (lambda d: d) if as_written else catalogue_as_upstream_admits
        obj = as_claim(admitted(claim(row, row["example"])), "bad")
        old = as_claim(admitted(claim(row, row["old"])), "bad") if row.get("old") is not None else None
        out.append((f"catalogue {row['id']}", obj, old))
    for where, obj in mutations():  # corpus graphs as upstream admits them, with one field broken
        out.append((f"mutation {where}", as_claim(obj, "m"), None))
    return out


def test_validate_gives_the_operators_verdicts(upstream_operator: OperatorStack) -> None:
    all_cases = cases()
    if not any(c[0].startswith("corpus") for c in all_cases):
        pytest.skip("no corpus documents: ../shared/corpus must be laid beside the checkout")
    cp = upstream_operator.cp
    ensure_namespace(cp.client, NAMESPACE)
    config = platform_config(upstream_operator.config)
    tally: Counter[str] = Counter()
    disagreements = []
    for i, (case, obj, old) in enumerate(all_cases):
        # A name of its own: the operator's finalizer keeps an updated case's object a while after its delete.
        obj, old = _named(obj, f"case-{i}"), _named(old, f"case-{i}") if old else None
        operator = operator_verdict(cp, copy.deepcopy(obj), copy.deepcopy(old) if old else None)
        ours = offline_verdict(obj, old, config)
        if agree(operator, ours):
            tally["agree"] += 1
        elif known(case, operator, ours):
            tally["known"] += 1
        else:
            disagreements.append(
                f"{case}: the operator {'accepts' if operator is None else sorted(operator)}, "
                f"validate {'accepts' if ours is None else sorted(ours)}"
            )
    print(f"verdicts: {tally['agree']} of {len(all_cases)} agree, {tally['known']} known disagreements")
    print("\n".join(disagreements))
    assert not disagreements, f"{len(disagreements)} of {len(all_cases)} disagree:\n" + "\n".join(disagreements[:60])


def _dcd(name: str, change: Callable[[Obj], None]) -> Obj:
    doc = yaml.safe_load((REPO / "examples" / "dcd" / "vllm-worker.yaml").read_text())
    doc["metadata"] = {"name": name, "namespace": NAMESPACE}
    change(doc["spec"])
    return doc


def _epp_without_config(spec: Obj) -> None:
    spec.update(type="epp", replicas=1)


def _main_mount_without_path(spec: Obj) -> None:
    pod = spec["podTemplate"]["spec"]
    pod["containers"][0]["volumeMounts"] = [{"name": "cache", "mountPath": ""}]
    pod["volumes"] = [{"name": "cache", "emptyDir": {}}]


@pytest.mark.parametrize(
    ("change", "operator_field", "our_field"),
    [
        (lambda spec: None, None, None),
        (_epp_without_config, "spec.eppConfig", "spec.eppConfig"),
        (
            _main_mount_without_path,
            "spec.volumeMounts[0].mountPoint",
            "spec.podTemplate.spec.containers[0].volumeMounts[0].mountPath",
        ),
    ],
    ids=["as-written", "epp-without-config", "main-mount-without-path"],
)
def test_a_v1beta1_component_deployment_is_also_checked_as_v1alpha1(
    upstream_operator: OperatorStack, change: Callable[[Obj], None], operator_field: str | None, our_field: str | None
) -> None:
    """The operator's webhook checks a v1beta1 DCD in its v1alpha1 form too (its EPP needs a config, its main
    container's mounts a path); validate refuses the same DCDs, each naming the field in the shape written."""
    ensure_namespace(upstream_operator.cp.client, NAMESPACE)
    doc = _dcd(f"dcd-{(operator_field or 'spec.ok').split('.')[1].lower().replace('[0]', '')}", change)
    operator = operator_verdict(upstream_operator.cp, copy.deepcopy(doc), None)
    ours = offline_verdict(doc, None, platform_config(upstream_operator.config))
    if operator_field is None:
        assert operator is None and ours is None, (operator, ours)
        return
    assert operator is not None and any(_same_field(operator_field, f) for f in operator), operator
    assert ours is not None and any(_same_field(our_field, f) for f in ours), ours

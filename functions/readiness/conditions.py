"""The XR's custom conditions: the DGD's Ready verdict and ``TopologyLevelsAvailable``
(docs/upstream/operator.md §3.1).

Crossplane owns the system condition types (Ready, Synced, Healthy, Responsive) and ignores a
function's attempt to set them, so upstream's DGD ``Ready`` condition is published under the type
``DynamoGraphReady``, with upstream's reasons and messages. Crossplane's own ``Ready`` condition
still follows the composed resources' readiness, which the status step sets from the same checks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from functions.contract import Condition, Result
from functions.readiness.verdicts import (
    PROGRESS_DEADLINE_EXCEEDED,
    ROLLOUT_COMPLETE,
    ROLLOUT_STALLED,
    ROLLOUT_UPDATING,
    Readiness,
)

READY_CONDITION = "DynamoGraphReady"
ALL_READY_REASON = "all_resources_are_ready"
ALL_READY_MESSAGE = "All resources are ready"
NOT_READY_REASON = "some_resources_are_not_ready"
ROLLING_UPDATE_REASON = "rolling_update_in_progress"
ROLLING_UPDATE_CONDITION = Condition(
    READY_CONDITION, "False", ROLLING_UPDATE_REASON, "A managed rolling update of the workers is in progress"
)

TOPOLOGY_CONDITION = "TopologyLevelsAvailable"
GROVE_TOPOLOGY_CONDITION = "TopologyLevelsUnavailable"  # on the PodCliqueSet, set by Grove
GROVE_TOPOLOGY_NOT_FOUND = "ClusterTopologyNotFound"
TOPOLOGY_PENDING = Condition(
    TOPOLOGY_CONDITION,
    "Unknown",
    "TopologyConditionPending",
    "Waiting for topology condition from the scheduling framework",
)
TOPOLOGY_AVAILABLE = Condition(
    TOPOLOGY_CONDITION,
    "True",
    "AllTopologyLevelsAvailable",
    "All required topology levels are available in the cluster topology",
)


def graph_ready_condition(not_ready: Iterable[tuple[str, str]]) -> Condition:
    """``DynamoGraphReady`` from the (resource name, reason) pairs of what is not ready, sorted by name."""
    pairs = sorted(not_ready)
    if not pairs:
        return Condition(READY_CONDITION, "True", ALL_READY_REASON, ALL_READY_MESSAGE)
    message = "Resources not ready: " + "; ".join(f"{name}: {reason}" for name, reason in pairs)
    return Condition(READY_CONDITION, "False", NOT_READY_REASON, message)


# The rollout of a graph's (or a component deployment's) workloads, as a Deployment's ``Progressing``: True while
# every component runs its desired replicas at the current spec or is getting there, False once a rollout stalled.
PROGRESSING_CONDITION = "Progressing"
ROLLOUT_COMPLETE_REASON = "RolloutComplete"
ROLLOUT_COMPLETE_MESSAGE = "Every component's replicas are updated"
ROLLOUT_IN_PROGRESS_REASON = "RolloutInProgress"


def rollout_condition(rollout: str, message: str) -> Condition:
    """``Progressing`` for a rollout state: False when stalled, True while updating (with ``message``) or done."""
    if rollout == ROLLOUT_STALLED:
        return Condition(PROGRESSING_CONDITION, "False", PROGRESS_DEADLINE_EXCEEDED, message)
    if rollout == ROLLOUT_UPDATING:
        return Condition(PROGRESSING_CONDITION, "True", ROLLOUT_IN_PROGRESS_REASON, message)
    return Condition(PROGRESSING_CONDITION, "True", ROLLOUT_COMPLETE_REASON, ROLLOUT_COMPLETE_MESSAGE)


def component_progressing(readiness: Readiness) -> Condition:
    """A component deployment's ``Progressing`` from its workload's rollout."""
    return rollout_condition(readiness.rollout, readiness.progress or readiness.reason)


def progressing_condition(rollouts: Iterable[tuple[str, Readiness]]) -> Condition:
    """``Progressing`` from each component's (name, readiness): False naming every stalled component, else True
    naming every one whose updated replicas lag, else True and complete."""
    items = sorted(
        (name, r.rollout, r.progress or r.reason)
        for name, r in rollouts
        if r.rollout in (ROLLOUT_STALLED, ROLLOUT_UPDATING)
    )
    stalled = [f"{name}: {why}" for name, rollout, why in items if rollout == ROLLOUT_STALLED]
    if stalled:
        return rollout_condition(ROLLOUT_STALLED, "Rollout stalled: " + "; ".join(stalled))
    if items:
        message = "Updated replicas lag desired: " + "; ".join(f"{name}: {why}" for name, _, why in items)
        return rollout_condition(ROLLOUT_UPDATING, message)
    return rollout_condition(ROLLOUT_COMPLETE, "")


def rollout_of(obj: dict[str, Any] | None) -> str | None:
    """The rollout state a component deployment's ``Progressing`` condition reports, None without one."""
    found = condition(obj, PROGRESSING_CONDITION)
    if found is None:
        return None
    if found.get("status") == "False" and found.get("reason") == PROGRESS_DEADLINE_EXCEEDED:
        return ROLLOUT_STALLED
    return ROLLOUT_UPDATING if found.get("reason") == ROLLOUT_IN_PROGRESS_REASON else None


def condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any] | None:
    """The observed object's condition of type ``kind``, if it has one."""
    for item in ((obj or {}).get("status") or {}).get("conditions") or []:
        if item.get("type") == kind:
            return item
    return None


def is_true(obj: dict[str, Any] | None, kind: str) -> bool:
    return (condition(obj, kind) or {}).get("status") == "True"


def _find(conditions: Iterable[dict[str, Any]], type_: str) -> dict[str, Any] | None:
    return next((c for c in conditions if c.get("type") == type_), None)


def topology_condition(podcliqueset: dict[str, Any]) -> Condition:
    """``TopologyLevelsAvailable`` from Grove's ``TopologyLevelsUnavailable`` condition on the PodCliqueSet."""
    grove = _find((podcliqueset.get("status") or {}).get("conditions") or [], GROVE_TOPOLOGY_CONDITION)
    if grove is None:
        return TOPOLOGY_PENDING
    if grove.get("status") == "True":
        not_found = grove.get("reason") == GROVE_TOPOLOGY_NOT_FOUND
        reason = "TopologyDefinitionNotFound" if not_found else "TopologyLevelsUnavailable"
        return Condition(TOPOLOGY_CONDITION, "False", reason, str(grove.get("message", "")))
    return TOPOLOGY_AVAILABLE


def topology_warning(condition: Condition, previous: Iterable[dict[str, Any]]) -> Result | None:
    """Upstream's Warning event when topology constraints stop being enforced, once per change."""
    if condition.status != "False":
        return None
    prev = _find(previous, TOPOLOGY_CONDITION)
    if prev is not None and (prev.get("status"), prev.get("reason"), prev.get("message", "")) == (
        "False",
        condition.reason,
        condition.message,
    ):
        return None
    return Result("warning", f"Topology constraints no longer enforced: {condition.message}", condition.reason)

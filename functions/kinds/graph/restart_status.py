"""``status.restart``: upstream's restart state machine on the Grove pathway (docs/upstream/operator.md §3.4).

``spec.restart.id`` asks for a restart; the ``nvidia.com/restartAt`` annotation on a component's
clique template (``functions.kinds.graph.restart``) rolls its pods. Each reconcile derives the next
``status.restart`` from the previous one (the XR's observed status), the spec and what runs, as
upstream's ``computeRestartStatus`` does:

* no ``spec.restart``: a terminal status (Completed, Failed, Superseded) is kept, any other dropped;
* the same id with a terminal phase: already processed, the status stays;
* a new id (none observed yet, or a different one): ``Restarting`` at once, without looking at
  readiness: Parallel with every component (sorted), Sequential with the first of the order;
* the same id, Parallel: the components still restarting drop out as they finish; none left is
  ``Completed``;
* the same id, Sequential: once the one in progress has finished, the next in the order starts;
  after the last, ``Completed``. One that is no longer in the order starts the sequence over
  (newer upstream).

Upstream writes ``Superseded`` only when a managed rolling update runs, which the Grove pathway
never does, and never writes ``Pending`` or ``Failed``; neither does this module. A new id while a
restart is under way starts the new one from the beginning.

When has a component finished restarting? Upstream asks, for the components in progress, that
the PodCliqueSet's ``status.observedGeneration`` is set and not behind its ``metadata.generation``
(Grove has processed the template carrying the new annotation) and that the component's PodClique
or PodCliqueScalingGroup is ready by the docs/upstream/operator.md §3.2 rules: its own observedGeneration caught up and
``spec.replicas == ready/available == updated == status.replicas`` (or zero replicas). A component
no longer in the graph counts as finished. Upstream can rely on having written the annotation
itself before it looks; here the annotation reaches the cluster only after the pipeline returns,
so the observed PodCliqueSet could still be the one from before (not applied yet, a stale read,
an apply that failed), and the component's old pods, all ready and up to date, would pass for
restarted ones. So a component also needs every one of its cliques in the observed PodCliqueSet
to carry ``restartAt`` = the id being restarted: together with the generation check, this means
Grove has accepted the change and the readiness seen is that of the new pods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from functions.api.graph import Graph
from functions.kinds.graph.graph_status import ComponentStatus
from functions.kube.labels import RESTART_AT
from functions.kube.naming import clique_names
from functions.readiness.verdicts import generation_problem

SEQUENTIAL = "Sequential"
PARALLEL = "Parallel"

PENDING = "Pending"
RESTARTING = "Restarting"
COMPLETED = "Completed"
FAILED = "Failed"
SUPERSEDED = "Superseded"
TERMINAL_PHASES = frozenset({COMPLETED, FAILED, SUPERSEDED})


@dataclass(frozen=True)
class RestartRequest:
    """``spec.restart``."""

    id_: str
    strategy: str = SEQUENTIAL
    order: tuple[str, ...] = ()  # strategy.order; empty: alphabetical

    @property
    def parallel(self) -> bool:
        return self.strategy == PARALLEL

    def sequence(self, components: Iterable[str]) -> tuple[str, ...]:
        """The Sequential order: ``strategy.order``, or the component names sorted (Go ``sort.Strings``)."""
        return self.order or tuple(sorted(components))


@dataclass(frozen=True)
class RestartStatus:
    """``status.restart``; empty fields are left out, as Go's ``omitempty`` does."""

    observed_id: str = ""
    phase: str = ""
    in_progress: tuple[str, ...] = ()

    @property
    def terminal(self) -> bool:
        return self.phase in TERMINAL_PHASES

    def as_status(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.in_progress:
            out["inProgress"] = list(self.in_progress)
        if self.observed_id:
            out["observedID"] = self.observed_id
        if self.phase:
            out["phase"] = self.phase
        return out


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def restart_request(xr: dict[str, Any]) -> RestartRequest | None:
    """``spec.restart`` of the XR; None without one (or with an empty id, which upstream treats alike)."""
    restart = (xr.get("spec") or {}).get("restart")
    if not isinstance(restart, dict) or not restart.get("id"):
        return None
    strategy = restart.get("strategy") if isinstance(restart.get("strategy"), dict) else {}
    return RestartRequest(
        id_=str(restart["id"]),
        strategy=PARALLEL if strategy.get("type") == PARALLEL else SEQUENTIAL,
        order=_strings(strategy.get("order")),
    )


def observed_restart_status(xr: dict[str, Any]) -> RestartStatus | None:
    """``status.restart`` as the previous reconcile wrote it."""
    restart = (xr.get("status") or {}).get("restart")
    if not isinstance(restart, dict):
        return None
    return RestartStatus(
        observed_id=str(restart.get("observedID") or ""),
        phase=str(restart.get("phase") or ""),
        in_progress=_strings(restart.get("inProgress")),
    )


def is_new_request(request: RestartRequest, previous: RestartStatus | None) -> bool:
    return previous is None or not previous.observed_id or previous.observed_id != request.id_


def needs_progress(request: RestartRequest | None, previous: RestartStatus | None) -> bool:
    """Whether the next status depends on what runs: a restart under way with the same id."""
    return request is not None and not is_new_request(request, previous) and not (previous and previous.terminal)


Progress = Callable[[Sequence[str]], list[str]]  # components asked about -> those still restarting


def next_restart_status(
    request: RestartRequest | None,
    previous: RestartStatus | None,
    components: Iterable[str],
    still_restarting: Progress,
) -> RestartStatus | None:
    """Upstream's ``computeRestartStatus`` for the Grove pathway (no managed rolling update, no Superseded)."""
    if request is None:
        return previous if previous is not None and previous.terminal else None
    if previous is not None and not is_new_request(request, previous) and previous.terminal:
        return previous
    names = tuple(components)
    if request.parallel:
        return _parallel(request, previous, names, still_restarting)
    return _sequential(request, previous, request.sequence(names), still_restarting)


def _parallel(
    request: RestartRequest, previous: RestartStatus | None, names: tuple[str, ...], still_restarting: Progress
) -> RestartStatus:
    everyone = tuple(sorted(names))
    if is_new_request(request, previous):
        if everyone:
            return RestartStatus(request.id_, RESTARTING, everyone)
        return RestartStatus(request.id_, COMPLETED)
    to_check = previous.in_progress if previous is not None and previous.in_progress else everyone
    remaining = tuple(still_restarting(to_check)) if to_check else ()
    if not remaining:
        return RestartStatus(request.id_, COMPLETED)
    return RestartStatus(request.id_, RESTARTING, remaining)


def _sequential(
    request: RestartRequest, previous: RestartStatus | None, order: tuple[str, ...], still_restarting: Progress
) -> RestartStatus:
    if not order:
        return RestartStatus(request.id_, COMPLETED)
    current = previous.in_progress[0] if previous is not None and previous.in_progress else ""
    if is_new_request(request, previous) or not current:
        return RestartStatus(request.id_, RESTARTING, (order[0],))
    if still_restarting([current]):
        return RestartStatus(request.id_, RESTARTING, (current,))
    if current not in order:
        return RestartStatus(request.id_, RESTARTING, (order[0],))
    index = order.index(current)
    if index + 1 == len(order):
        return RestartStatus(request.id_, COMPLETED)
    return RestartStatus(request.id_, RESTARTING, (order[index + 1],))


def clique_restart_annotations(podcliqueset: dict[str, Any] | None) -> dict[str, str]:
    """Clique name -> its ``nvidia.com/restartAt`` in a PodCliqueSet (only the cliques that carry one)."""
    cliques = (((podcliqueset or {}).get("spec") or {}).get("template") or {}).get("cliques") or []
    out = {}
    for clique in cliques:
        if not isinstance(clique, dict):
            continue
        value = (clique.get("annotations") or {}).get(RESTART_AT)
        if clique.get("name") and value is not None:
            out[str(clique["name"])] = str(value)
    return out


def grove_progress(
    graph: Graph,
    restart_id: str,
    observed_podcliqueset: dict[str, Any] | None,
    statuses: Iterable[ComponentStatus],
) -> Progress:
    """Which of the given components are still restarting to ``restart_id`` (the rule in the module doc)."""
    by_name = {c.name: c for c in graph.components}
    readiness = {s.name: s.readiness.ready for s in statuses}
    annotated = clique_restart_annotations(observed_podcliqueset)
    caught_up = observed_podcliqueset is not None and generation_problem(observed_podcliqueset) is None

    def still_restarting(names: Sequence[str]) -> list[str]:
        if not caught_up:
            return list(names)
        out = []
        for name in names:
            component = by_name.get(name)
            if component is None:
                continue  # no longer in the graph: nothing left to restart
            stamped = all(annotated.get(clique) == restart_id for clique in clique_names(component))
            if not (stamped and readiness.get(name, False)):
                out.append(name)
        return out

    return still_restarting


def restart_status(
    xr: dict[str, Any],
    graph: Graph,
    observed_podcliqueset: dict[str, Any] | None,
    statuses: Iterable[ComponentStatus],
) -> RestartStatus | None:
    """The next ``status.restart`` from the XR (spec and previous status) and the observed Grove objects."""
    request = restart_request(xr)
    progress = grove_progress(graph, request.id_ if request else "", observed_podcliqueset, statuses)
    return next_restart_status(request, observed_restart_status(xr), (c.name for c in graph.components), progress)

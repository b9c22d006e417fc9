"""The controller side of ``scripts/bench-cluster.py``: the upstream operator as one more package beside ours, and
what each package's controller spends in a round.

The operator (``--package operator``) runs as ``tests/harness/operator_stack.py`` starts it, on a control plane of
its own (its CRDs have the package's names). For ``examples/dgd/vllm-agg.yaml`` it creates the same six objects the
package composes: the PodCliqueSet, the Services ``<graph>-frontend`` and ``<graph>-vllmworker``, and the
ServiceAccount, Role and RoleBinding ``<graph>-k8s-service-discovery(-role, -binding)``. It labels none of them
with the graph's name (the PodCliqueSet aside), so a graph's objects are found by their controller owner
reference, the graph's DGD (``owner_graph``). The ServiceAccount and RoleBinding ``planner-serviceaccount(-binding)``
it creates once per namespace have no owner and belong to no graph.

A package's controller is Crossplane (``crossplane core start``) plus the function's server; the operator's is its
``manager``. Under runc the PID the control plane records for the function is ``runc run``'s, so its figures are
those of the container's processes below it. Peak memory is ``VmHWM`` of ``/proc/PID/status``, reset at the start
of each round (``/proc/PID/clear_refs``, as root) so that it is the round's peak.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from harness.controlplane import ControlPlane
from harness.operator_stack import PROCESS, start_operator

OPERATOR = "operator"  # its name among bench-cluster's --package choices
SETTLE_QUIET_SECONDS = 10.0  # no CRD write for this long: the operator's start-up tail is over
SETTLE_LIMIT_SECONDS = 120.0
WRITES = ("POST", "PUT", "PATCH", "APPLY", "DELETE")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")


def owner_graph(obj: dict[str, Any]) -> str | None:
    """The DGD that controls ``obj`` (its controller owner reference), or None."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if (
            ref.get("kind") == "DynamoGraphDeployment"
            and str(ref.get("apiVersion", "")).startswith("nvidia.com/")
            and ref.get("controller")
        ):
            return ref.get("name")
    return None


def ready(obj: dict[str, Any]) -> bool:
    """Whether a DGD's ``Ready`` condition is ``True`` (the operator's and the package's alike)."""
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def start_operator_stack(cp: ControlPlane) -> None:
    """The upstream operator on ``cp``; a missing prerequisite (its build, helm, root) ends the benchmark."""
    try:
        start_operator(cp)
    except (pytest.skip.Exception, pytest.fail.Exception) as err:
        raise SystemExit(f"bench-cluster: --package {OPERATOR}: {err}") from None


def crd_writes(requests: Mapping[str, int]) -> int:
    """The writes to CRDs (and their status) among the API server's requests by verb and resource, as
    bench-cluster's ``requests_served`` keys them (``PATCH customresourcedefinitions/status``)."""
    total = 0
    for key, count in requests.items():
        verb, _, rest = key.partition(" ")
        if verb in WRITES and rest.split("/")[0].split(" ")[0] == "customresourcedefinitions":
            total += count
    return total


def wait_settled(
    count: Callable[[], int], quiet: float = SETTLE_QUIET_SECONDS, limit: float = SETTLE_LIMIT_SECONDS
) -> float:
    """Wait until ``count()`` has not changed for ``quiet`` seconds, at most ``limit``; the seconds waited.

    Once ``start_operator`` returns, the operator is still writing its CRDs: it injects the webhook CA into the
    convertible CRDs' conversion and its storage-version migrator patches their ``storedVersions``, and each CRD
    change restarts the API server's watch cache of that kind (its watches answer 429 meanwhile). The benchmark
    waits this out before the first round, so that the round measures graphs, not the operator's start."""
    start = last_change = time.monotonic()
    seen = count()
    while time.monotonic() - last_change < quiet and time.monotonic() - start < limit:
        time.sleep(1.0)
        if (now := count()) != seen:
            seen, last_change = now, time.monotonic()
    return time.monotonic() - start


# --- processes -------------------------------------------------------------------------------------------------


def _stat(pid: int, proc: Path = PROC) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None when it is gone."""
    try:
        return (proc / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds a process has spent so far (0 when it is gone or was not started)."""
    fields = None if pid is None else _stat(pid)
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def status_mib(pid: int, field: str = "VmHWM") -> float | None:
    """A memory figure of /proc/PID/status in MiB: ``VmHWM`` (peak resident) or ``VmRSS`` (resident now)."""
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def reset_peak(pid: int) -> bool:
    """Reset a process's ``VmHWM`` to its resident memory now (``clear_refs`` 5); False when not allowed."""
    try:
        (PROC / str(pid) / "clear_refs").write_text("5")
    except OSError:
        return False
    return True


def descendants(pid: int, parents: Mapping[int, int]) -> list[int]:
    """The processes below ``pid``, given each process's parent (``{pid: ppid}``), in no particular order."""
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    out, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        out.append(child)
        todo += children.get(child, [])
    return sorted(out)


def process_parents(proc: Path = PROC) -> dict[int, int]:
    """Every process's parent, from /proc."""
    parents = {}
    for entry in proc.iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name), proc)) is not None:
            parents[int(entry.name)] = int(fields[1])
    return parents


def command_name(pid: int) -> str:
    with contextlib.suppress(OSError):
        return (PROC / str(pid) / "comm").read_text().strip()
    return ""


def controller_processes(
    pids: Mapping[str, int], names: Mapping[int, str], parents: Mapping[int, int]
) -> dict[str, list[int]]:
    """The processes of a control plane (``ControlPlane.pids``) that are its package's controller, by role:
    ``crossplane`` and ``function`` (the server: below ``runc run`` when it runs as a container) for ours,
    ``manager`` for the operator, none for upstream's CRDs alone. ``names`` are processes' command names."""
    out: dict[str, list[int]] = {}
    if "crossplane" in pids:
        out["crossplane"] = [pids["crossplane"]]
    if "function-dynamo" in pids:
        function = pids["function-dynamo"]
        out["function"] = descendants(function, parents) if names.get(function) == "runc" else [function]
    if PROCESS in pids:
        out["manager"] = [pids[PROCESS]]
    return out


def controllers_of(cp: ControlPlane) -> dict[str, list[int]]:
    """``controller_processes`` of ``cp``, read from /proc."""
    parents = process_parents()
    return controller_processes(cp.pids, {pid: command_name(pid) for pid in cp.pids.values()}, parents)

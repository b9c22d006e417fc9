"""The one way the tests and scripts wait: ``until`` asks a probe again and again until it answers, and when it gives
up says what it waited for, for how long, and what the probe last answered or raised.

The rest of the harness waits through it: for a process to serve (``controlplane.wait_for``), a CRD to be
established, the packages to be installed, an XR to be Synced, a container or a server to start.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

_T = TypeVar("_T")

SETTLE_SECONDS = 90.0  # how long a real-stack test waits for the cluster to reach what it expects
EVERY_SECONDS = 0.5
SHOWN = 300  # characters of the last value or error a timeout shows


class NotYet(Exception):
    """Raised by a probe (or an error deriving from it, as the test API client's 404) to say: not there yet."""


class Timeout(AssertionError):
    """``until`` gave up: what it waited for, after how long, and the probe's last answer or error."""


def until(
    what: str,
    probe: Callable[[], _T | None],
    seconds: float = SETTLE_SECONDS,
    *,
    every: float = EVERY_SECONDS,
    tolerate: tuple[type[Exception], ...] = (),
    stop: Callable[[], str | None] | None = None,
    where: Callable[[], str] | None = None,
) -> _T:
    """``probe()``'s first truthy answer, asked every ``every`` seconds; ``Timeout`` after ``seconds``.

    A probe that raises ``NotYet`` (a 404 from the test API server is one) or one of ``tolerate`` has not answered
    yet; any other error ends the wait. ``stop()``, asked after each miss, names why the wait can no longer succeed
    (a process that exited) and ends it at once. ``where()`` adds what to look at to the timeout's message (the
    objects' state, a log)."""
    deadline = time.monotonic() + seconds
    last: object = None
    error: Exception | None = None
    while True:
        try:
            answer = probe()
        except (NotYet, *tolerate) as err:
            error = err
        else:
            if answer:
                return answer
            last, error = answer, None
        reason = stop() if stop is not None else None
        if reason or time.monotonic() > deadline:
            seen = f"last error: {type(error).__name__}: {error}" if error is not None else f"last seen: {last!r}"
            message = f"{what}: {reason or f'not so after {seconds:.0f}s'} ({seen[:SHOWN]})"
            raise Timeout(f"{message}; {where()}" if where is not None else message)
        time.sleep(every)

"""``harness.poll.until``, the one way the tests wait: what it returns, what it tolerates, and what its timeout says."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from harness.controlplane import APIError, NotFound
from harness.poll import NotYet, Timeout, until


def answers(*values: object) -> Callable[[], object]:
    """A probe answering ``values`` in turn (raising those that are exceptions), then the last one for ever."""
    it: Iterator[object] = iter(values)
    last: list[object] = [None]

    def probe() -> object:
        value = next(it, last[0])
        last[0] = value
        if isinstance(value, Exception):
            raise value
        return value

    return probe


def test_the_first_truthy_answer_is_returned() -> None:
    assert until("a value", answers(None, [], 0, {"a": 1}), 5, every=0) == {"a": 1}


def test_an_object_not_there_yet_is_waited_for() -> None:
    gone = NotFound(404, {"message": "not found"}, "GET /x")
    assert isinstance(gone, NotYet) and isinstance(gone, APIError)
    assert until("the object", answers(gone, gone, "there"), 5, every=0) == "there"


def test_another_error_ends_the_wait_unless_tolerated() -> None:
    refused = APIError(403, {"message": "forbidden"}, "GET /x")
    with pytest.raises(APIError, match="forbidden"):
        until("the object", answers(refused, "there"), 5, every=0)
    assert until("the object", answers(refused, "there"), 5, every=0, tolerate=(APIError,)) == "there"


def test_the_timeout_names_what_it_waited_for_what_it_last_saw_and_where_to_look() -> None:
    with pytest.raises(Timeout) as timeout:
        until("the graph Ready", answers({}), 0.05, every=0.01, where=lambda: "see crossplane.log")
    assert str(timeout.value) == "the graph Ready: not so after 0s (last seen: {}); see crossplane.log"
    assert isinstance(timeout.value, AssertionError)  # a failed test, not an error in the harness
    with pytest.raises(Timeout, match=r"the object: not so after 0s \(last error: NotFound: GET /x: HTTP 404"):
        until("the object", answers(NotFound(404, {"message": "not found"}, "GET /x")), 0.05, every=0.01)


def test_a_stop_reason_ends_the_wait_at_once() -> None:
    looks: list[int] = []

    def probe() -> bool:
        looks.append(1)
        return False

    with pytest.raises(Timeout, match=r"^the server ready: it exited with 1 \(last seen: False\)$"):
        until("the server ready", probe, 60, every=0, stop=lambda: "it exited with 1" if len(looks) >= 3 else None)
    assert len(looks) == 3

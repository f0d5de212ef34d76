"""The suite's costly shared services, started early in the background and stopped after their last test.

A service shared by many tests (the covey service of ``shared_service``, the two-node cluster
of ``two_nodes``) is a handful of processes that take 10-20 s to start, much of it waiting on
Ray. Each is registered here under the name of the fixture that yields it. Once collection
knows which fixtures the selected tests use (``start_needed``), the needed services start in a
thread of their own while the Ray-free tests, which run first, keep the other core busy; a
fixture then only waits for its service (``SharedService.get``). After the last test that uses
one (``close_unneeded``), it is stopped at once instead of idling until the end of the run.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import pytest

T = TypeVar("T")


class SharedService(Generic[T]):
    """One service: ``opener`` is a context manager factory that starts it and, on exit, stops
    it (and fails if it left processes behind). Started at most once at a time; thread-safe."""

    def __init__(self, opener: Callable[[], contextlib.AbstractContextManager[T]]) -> None:
        self._opener = opener
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stack = contextlib.ExitStack()
        self._value: T | None = None
        self._error: BaseException | None = None

    def start(self) -> None:
        """Begin starting the service in a background thread, unless it is started already."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._open, name="shared-service-start", daemon=True)
                self._thread.start()

    def _open(self) -> None:
        try:
            self._value = self._stack.enter_context(self._opener())
        except BaseException as exc:  # re-raised in the test that asks for it (a skip included)
            self._error = exc

    def get(self) -> T:
        """The started service: waits for its start; raises what the start raised."""
        self.start()
        assert self._thread is not None
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def close(self) -> None:
        """Stop the service (waiting for a start under way); a later ``get`` starts it again."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is None:
            return
        thread.join()
        stack, self._stack = self._stack, contextlib.ExitStack()
        self._value = self._error = None
        stack.close()


SERVICES: dict[str, SharedService[Any]] = {}
"""The shared services by fixture name; a conftest registers its own (``register``)."""

_last_user: dict[str, str] = {}


def register(fixture: str, opener: Callable[[], contextlib.AbstractContextManager[T]]) -> SharedService[T]:
    service = SERVICES.setdefault(fixture, SharedService(opener))
    return service


def fixture_of(name: str) -> Iterator[Any]:
    """The body of a session fixture that yields the service registered as ``name``."""
    service = SERVICES[name]
    try:
        yield service.get()
    finally:
        service.close()


def start_needed(items: Sequence[pytest.Item]) -> None:
    """Start, in the background, every registered service a selected test uses, and note the
    last test that uses each."""
    _last_user.clear()
    for item in items:
        for name in SERVICES.keys() & set(getattr(item, "fixturenames", ())):
            _last_user[name] = item.nodeid
    for name in _last_user:
        SERVICES[name].start()


def close_unneeded(item: pytest.Item) -> None:
    """After ``item``'s teardown: stop each service whose last user ``item`` was."""
    for name, nodeid in list(_last_user.items()):
        if nodeid == item.nodeid:
            del _last_user[name]
            SERVICES[name].close()


def close_all() -> None:
    """At the end of the run (also one cut short): stop whatever is still up."""
    _last_user.clear()
    for service in SERVICES.values():
        service.close()

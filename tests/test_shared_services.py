"""The suite's shared services (tests/shared_services.py): started once in the background for
the selected tests that use them, waited for by those tests, stopped after the last of them."""

from __future__ import annotations

import contextlib
import threading
from types import SimpleNamespace

import pytest

from tests import shared_services
from tests.shared_services import SharedService


class Opener:
    def __init__(self) -> None:
        self.log: list[str] = []
        self.release = threading.Event()

    @contextlib.contextmanager
    def __call__(self):
        self.log.append("start")
        self.release.wait(5)
        yield f"service {self.log.count('start')}"
        self.log.append("stop")


def test_a_service_starts_once_in_the_background_and_a_get_waits_for_it():
    opener = Opener()
    service = SharedService(opener)
    service.start()
    service.start()  # already under way: not again
    assert not opener.release.is_set()
    opener.release.set()
    assert service.get() == "service 1" and service.get() == "service 1"
    service.close()
    service.close()
    assert opener.log == ["start", "stop"]
    assert service.get() == "service 2"  # asked again after it stopped: started again
    service.close()


def test_a_failed_start_is_raised_in_each_test_that_asks():
    def failing():
        raise RuntimeError("ray start failed")

    service = SharedService(failing)  # type: ignore[arg-type]
    service.start()
    for _ in range(2):
        with pytest.raises(RuntimeError, match="ray start failed"):
            service.get()
    service.close()


def test_the_needed_services_start_and_each_stops_after_its_last_user(monkeypatch):
    cluster, other = Opener(), Opener()
    cluster.release.set()
    other.release.set()
    monkeypatch.setattr(shared_services, "SERVICES", {"cluster": SharedService(cluster), "unused": SharedService(other)})
    items = [SimpleNamespace(nodeid=f"t{i}", fixturenames=names)
             for i, names in enumerate([["tmp_path"], ["cluster"], ["cluster", "tmp_path"], ["tmp_path"]])]
    shared_services.start_needed(items)  # type: ignore[arg-type]
    assert shared_services.SERVICES["cluster"].get() == "service 1"
    shared_services.close_unneeded(items[1])  # not its last user
    assert cluster.log == ["start"]
    shared_services.close_unneeded(items[2])
    assert cluster.log == ["start", "stop"] and other.log == []  # nobody selected uses the other
    shared_services.close_all()

"""The warm session hosts: runs one after another reuse one host process; a second run at
once starts another, and the idle service keeps one."""

from __future__ import annotations

from covey.service import host as host_module
from covey.service.host import HostSupply


class FakeHost:
    created: list["FakeHost"] = []

    def __init__(self) -> None:
        self.killed = False
        FakeHost.created.append(self)

    @classmethod
    def create(cls, node_id=None) -> "FakeHost":
        return cls()

    async def ready(self) -> None:
        return None

    async def reset(self) -> bool:
        return True

    def kill(self) -> None:
        self.killed = True


async def test_runs_one_after_another_reuse_one_host(monkeypatch):
    monkeypatch.setattr(host_module, "HostHandle", FakeHost)
    FakeHost.created = []
    supply = HostSupply(None)
    supply.warm()
    for _ in range(5):
        host = await supply.take()
        await supply.give_back(host)
    assert len(FakeHost.created) == 1 and supply.ready == FakeHost.created


async def test_two_runs_at_once_start_a_second_host_and_the_idle_supply_keeps_one(monkeypatch):
    monkeypatch.setattr(host_module, "HostHandle", FakeHost)
    FakeHost.created = []
    supply = HostSupply(None)
    supply.warm()
    first, second = await supply.take(), await supply.take()
    assert first is not second and len(FakeHost.created) == 2
    await supply.give_back(first)
    await supply.give_back(second)
    assert len(supply.ready) == 1 and sum(h.killed for h in FakeHost.created) == 1


async def test_a_host_that_cannot_be_reset_is_replaced_ahead_of_the_next_run(monkeypatch):
    monkeypatch.setattr(host_module, "HostHandle", FakeHost)
    FakeHost.created = []
    supply = HostSupply(None)
    supply.warm()
    host = await supply.take()

    async def broken() -> bool:
        return False

    host.reset = broken
    await supply.give_back(host)
    assert host.killed and len(supply.ready) == 1 and supply.ready[0] is not host

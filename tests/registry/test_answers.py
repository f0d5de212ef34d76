"""The registry's typed answers, and how its handle turns a refusal into the error of whoever must act."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from covey.errors import AgentUnavailable, LimitExceeded, ModelBehaviorError
from covey.registry.handle import RegistryHandle
from covey.runtime.answers import Finished, Refused
from covey.runtime.records import FinalReport
from tests.registry.fakes import request, spec


@pytest.mark.parametrize("kind, error, limit", [
    ("depth", LimitExceeded, "depth"), ("concurrency", LimitExceeded, "concurrency"), ("budget", LimitExceeded, "budget"),
    ("type", ModelBehaviorError, None), ("place", ModelBehaviorError, None), ("role", ModelBehaviorError, None),
    ("start", AgentUnavailable, None),
])
def test_a_refusal_becomes_the_error_of_whoever_must_act_with_the_same_text(kind, error, limit):
    raised = Refused(kind=kind, text="what the model is told").error()
    assert type(raised) is error and str(raised) == "what the model is told"
    assert getattr(raised, "limit", None) == limit


def test_finished_says_how_the_actor_reset_as_the_pool_takes_it():
    report = FinalReport(status="completed", text="done")
    assert [Finished.after(report, clean).reset for clean in (True, False, None)] == ["clean", "dirty", "unchecked"]
    assert [Finished(report=report, reset=reset).clean for reset in ("clean", "dirty", "unchecked")] == [True, False, None]


class _Actor:
    """A registry actor whose ``launch`` and ``reserve`` answer ``answer``."""

    def __init__(self, answer: Any) -> None:
        self.launch = self.reserve = _Call(answer)


class _Call:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def remote(self, *args: Any) -> Any:
        return asyncio.sleep(0, self.answer)


@pytest.mark.parametrize("kind, error", [("type", ModelBehaviorError), ("budget", LimitExceeded), ("start", AgentUnavailable)])
async def test_the_handle_raises_a_refused_launch_or_reservation_by_kind(kind, error):
    handle = RegistryHandle(_Actor(Refused(kind=kind, text=f"refused: {kind}")))
    with pytest.raises(error, match=f"refused: {kind}"):
        await handle.launch(request(), spec())
    with pytest.raises(error, match=f"refused: {kind}"):
        await handle.reserve(request())

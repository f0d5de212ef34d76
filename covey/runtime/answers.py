"""What the registry and agent actors answer across an actor boundary, as typed values.

A refusal is an answer, not a crash: it travels as ``Refused`` and the handle
turns it into the exception of whoever must act (``Refused.error``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from covey.errors import AgentUnavailable, CoveyError, LimitExceeded, ModelBehaviorError
from covey.runtime.records import FinalReport, RunRecord

RefusalKind = Literal["depth", "concurrency", "budget", "type", "place", "role", "start"]
LIMITS = ("depth", "concurrency", "budget")
"""The refusals that are limits (``LimitExceeded``); type, place and role are the model's asks."""


class _Answer(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)


class Launched(_Answer):
    """The child is reserved, started and watched."""

    answer: Literal["launched"] = "launched"
    record: RunRecord
    actor: Any = None
    """The child's actor, for a followed (sync) launch only: a handle costs a GCS subscription where it lands."""


class Refused(_Answer):
    """A launch check failed, or the child could not be started: nothing of it remains."""

    answer: Literal["refused"] = "refused"
    kind: RefusalKind
    text: str
    """What the model is told (the error tool_result's text)."""

    def error(self) -> CoveyError:
        """The exception for whoever must act: the model for type, place and role, a limit for the rest."""
        if self.kind == "depth" or self.kind == "concurrency" or self.kind == "budget":  # LIMITS
            return LimitExceeded(self.text, self.kind)
        if self.kind == "start":
            return AgentUnavailable(self.text)
        return ModelBehaviorError(self.text)


class NeedRuntime(_Answer):
    """The launch named a session runtime by a key the registry does not hold: send it whole."""

    answer: Literal["need_runtime"] = "need_runtime"


LaunchAnswer = Annotated[Union[Launched, Refused, NeedRuntime], Field(discriminator="answer")]


def not_started(exc: BaseException) -> Refused:
    """The answer to a launch whose agent could not be started (``AgentUnavailable``)."""
    return Refused(kind="start", text=f"The agent could not be started: {exc}")

Reset = Literal["clean", "dirty", "unchecked"]


class Finished(_Answer):
    """An agent run's end as its actor answers it: the report, and how the actor reset after it."""

    report: FinalReport
    reset: Reset = "unchecked"
    """"unchecked": a follower may still be reading, so whoever recycles the actor asks it."""

    @property
    def clean(self) -> bool | None:
        """``reset`` as ``WarmPool.give_back`` takes it (None: ask the actor)."""
        return {"clean": True, "dirty": False, "unchecked": None}[self.reset]

    @classmethod
    def after(cls, report: FinalReport, clean: bool | None) -> "Finished":
        return cls(report=report, reset="unchecked" if clean is None else "clean" if clean else "dirty")

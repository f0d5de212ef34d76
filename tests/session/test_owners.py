"""The session's three state owners (no Ray): the main agent's slot turn to turn, the frozen
config, and ``Session``'s calls that change only the slot."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from covey.model.scripted import ScriptedModel
from covey.session import Session
from covey.session.main_slot import MainAgentSlot


class _Actor:
    """A main agent's actor (no Ray here)."""

    def __init__(self) -> None:
        self.reason: str | None = None

    async def cancel(self, status: str, reason: str) -> bool:
        self.reason = reason
        return True


def _slot() -> MainAgentSlot:
    return MainAgentSlot("agent-main", "claude-sonnet-4-5", "default")


def test_a_slot_outside_a_conversation_holds_nothing_between_turns():
    slot, main = _slot(), _Actor()
    assert slot.take() is None  # the first turn takes one from the pool
    slot.begin(main)  # type: ignore[arg-type]
    assert slot.running and slot.current is main
    assert slot.done(main, reusable=True) is False  # given back by the caller
    slot.end()
    assert (slot.turns, slot.running, slot.held, slot.take()) == (1, False, None, None)


def test_a_conversation_holds_its_main_actor_for_the_next_turn_until_released():
    slot, main = _slot(), _Actor()
    slot.hold()
    slot.begin(main)  # type: ignore[arg-type]
    assert slot.done(main, reusable=True) is True
    slot.end()
    assert slot.held is main and slot.take() is main and slot.held is None  # the next turn runs on it
    slot.begin(main)  # type: ignore[arg-type]
    assert slot.done(main, reusable=True) is True
    slot.end()
    assert slot.release() is main and slot.release() is None and slot.turns == 2


def test_a_conversation_does_not_hold_an_actor_that_failed_or_carries_teams():
    slot, main = _slot(), _Actor()
    slot.hold()
    assert slot.done(main, reusable=False) is False  # type: ignore[arg-type]
    assert slot.held is None and slot.turns == 1


def test_only_a_running_turn_is_interrupted_and_its_end_clears_the_mark():
    slot, main = _slot(), _Actor()
    assert slot.interrupt() is None and not slot.interrupting
    slot.begin(main)  # type: ignore[arg-type]
    assert slot.interrupt() is main and slot.interrupting
    slot.end()
    assert not slot.interrupting and not slot.running


def test_the_next_prompt_goes_as_written_when_the_client_composed_it():
    slot = _slot()
    slot.as_written(True)
    assert slot.verbatim
    slot.as_written(False)
    assert not slot.verbatim


def _session(tmp_path, **options) -> Session:
    return Session(cwd=str(tmp_path), model=ScriptedModel.from_dict({"rules": []}), env={"HOME": str(tmp_path)},
                   transcript_dir=str(tmp_path / "t"), **options)


def test_the_config_is_frozen_and_the_mode_and_model_change_only_the_slot(tmp_path):
    session = _session(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        session.config.model_id = "claude-haiku-4-5"  # type: ignore[misc]
    session.set_permission_mode("acceptEdits")
    session.set_model("haiku")
    assert session.config.policy.mode == "default" and session.slot.mode == "acceptEdits"
    assert session.policy.mode == "acceptEdits" and session.init_event().permissionMode == "acceptEdits"
    assert session.model_id == session.slot.model_id != session.config.model_id
    assert session.init_event().model == session.slot.model_id
    spec = session.main_spec("hi", SimpleNamespace(project_context={str(session.cwd): []}))  # type: ignore[arg-type]
    assert (spec.permissions.mode, spec.model_id) == ("acceptEdits", session.slot.model_id)
    assert spec.permissions is not session.config.policy and session.config.policy.mode == "default"
    session.close()


async def test_interrupt_marks_the_running_turn_and_stops_its_actor(tmp_path):
    session = _session(tmp_path)
    assert await session.interrupt() is False  # no turn runs
    main = _Actor()
    session.slot.begin(main)  # type: ignore[arg-type]
    assert await session.interrupt("stop now") is True
    assert main.reason == "stop now" and session.interrupting
    session.close()


def test_a_sessions_state_lives_in_its_three_owners(tmp_path):
    session = _session(tmp_path)
    assert set(vars(session)) == {"config", "kit", "slot"}
    assert session.session_id == session.kit.session_id and session.main_agent_id == session.slot.agent_id
    assert session.cwd == session.config.cwd == tmp_path.resolve()
    session.close()

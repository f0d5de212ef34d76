"""``Session(detach=True)`` and ``covey.attach`` against an in-test fake service: the run request a
detached session sends (detached, its options by field name, its cwd and env), its session id,
what cannot travel, and a follower's events (``after``, permission prompts, ``async for``)."""

from __future__ import annotations

import asyncio

import pytest

import covey
from covey.client import ports as protocol
from covey.errors import CoveyError, UserError
from covey.session import DetachedSession, Session
from tests.service.fake_service import FakeService, result

SESSION = "0b9c9a40-0000-4000-8000-0000000000bb"
ASK = protocol.control_request("can_use_tool", "perm-1", tool_name="Bash", input={"command": "touch x"},
                               message="Allow Bash (touch x)?")


def _opens_session(peer, request, _prompt):
    peer.send(protocol.success(request["request_id"], {"session_id": SESSION}))


async def test_a_detached_session_sends_a_detached_run_and_returns_its_session_id(service_root, tmp_path):
    session = Session(cwd=str(tmp_path), detach=True, model="scripted:rules.yaml", max_turns=3,
                      env={"HOME": "/h", "ANTHROPIC_API_KEY": "k"})
    assert isinstance(session, DetachedSession)  # a class of its own: it holds no Session state
    with FakeService(service_root, _opens_session) as fake:
        assert await session.submit("review it") == SESSION
    ((request, prompt),) = fake.runs
    sent = request["request"]
    assert sent["run"]["detach"] is True and sent["cwd"] == str(tmp_path) and sent["env"] == {
        "HOME": "/h", "ANTHROPIC_API_KEY": "k"}
    assert sent["options"]["max_turns"] == 3 and sent["options"]["model"].endswith("/rules.yaml")
    assert "cwd" not in sent["options"] and "env" not in sent["options"]
    assert prompt == protocol.user_message("review it")
    assert session.session_id == SESSION
    session.close()  # nothing of the run is here: closing leaves it going


async def test_a_session_that_cannot_start_raises_with_the_services_words(service_root):
    def refuses(peer, request, _prompt):
        peer.send(protocol.error(request["request_id"], "unknown model alias 'nope'"))

    with FakeService(service_root, refuses):
        with pytest.raises(CoveyError, match="unknown model alias 'nope'"):
            await Session(detach=True, model="nope").submit("go")


@pytest.mark.parametrize("fields, named", [
    ({"on_permission": lambda request: True}, "on_permission"),
    ({"pool_size": 3}, "pool_size"),
    ({"model": covey.ScriptedModel(rules=[])}, "model object"),
])
def test_what_cannot_travel_to_the_service_is_refused_naming_it(fields, named):
    with pytest.raises(UserError, match=named):
        Session(detach=True, **fields)


async def test_the_in_process_calls_of_a_detached_session_say_how_to_use_it():
    session = Session(detach=True)
    with pytest.raises(UserError, match="submit"):
        await session.run("go")
    with pytest.raises(UserError, match="has not been started"):
        session.attach()


def _followed(answers: list):
    """An attached session: two events, a prompt (its answer read), the result, the end."""
    def script(peer, request, _prompt):
        peer.send(protocol.success(request["request_id"], {"session_id": SESSION, "status": "running"}))
        peer.send({"type": "system", "subtype": "init", "session_id": SESSION, "uuid": "u0"})
        peer.send(protocol.stderr_line("covey: a warning"))
        peer.send({"type": "assistant", "uuid": "u1"})
        peer.send(ASK)
        answers.append(peer.receive())
        peer.send(result("made") | {"uuid": "u2"})
        peer.send({"type": protocol.DONE})
    return script


def test_attach_yields_the_events_answers_prompts_and_starts_after_a_uuid(service_root):
    answers: list = []
    with FakeService(service_root, _followed(answers)) as fake:
        followed = covey.attach(SESSION, after="u0", on_permission=lambda request: request["tool_name"] == "Bash")
        events = list(followed)
    assert [e["uuid"] for e in events] == ["u1", "u2"] and events[-1]["result"] == "made"
    assert followed.record["status"] == "running" and followed.stderr == ["covey: a warning"]
    assert fake.runs[0][0]["request"]["session_id"] == SESSION
    assert answers == [protocol.success("perm-1", {"behavior": "allow", "updatedInput": {"command": "touch x"}})]


async def test_async_attach_yields_the_same_and_a_prompt_nobody_answers_stays_open(service_root):
    def ends(peer, request, _prompt):
        peer.send(protocol.success(request["request_id"], {"session_id": SESSION}))
        peer.send({"type": "assistant", "uuid": "u1"})
        peer.send(ASK)
        peer.send({"type": protocol.DONE, "error": "the session's host died"})

    with FakeService(service_root, ends):
        followed = covey.attach(SESSION)
        got = []
        with pytest.raises(CoveyError, match="host died"):
            async for event in followed:
                got.append(event)
    assert got == [{"type": "assistant", "uuid": "u1"}] and list(followed.waiting) == ["perm-1"]
    await asyncio.sleep(0)


def test_a_run_the_service_refused_and_hung_up_on_raises_its_words_not_a_broken_pipe(monkeypatch):
    """The service refuses a run as soon as it reads its request, then closes: the prompt's line
    finds the connection gone, and the refusal already sent is what the program sees."""
    from covey.client import detached

    refused = protocol.refusal("r", "a detached run ... cannot be run with --no-session-persistence")

    class HungUp:
        def __init__(self) -> None:
            self.sent, self.lines = 0, list(refused)

        def send(self, message) -> None:
            self.sent += 1
            if self.sent > 1:
                raise BrokenPipeError(32, "Broken pipe")

        def receive(self):
            return self.lines.pop(0) if self.lines else None

        def close(self) -> None:
            pass

    monkeypatch.setattr(detached, "_connect", lambda address=None: HungUp())
    with pytest.raises(CoveyError, match="--no-session-persistence"):
        detached.submit("go", {}, cwd="/tmp", env={})

"""Where a rate-limit wait is seen (plain fakes, no Ray): the agent's figures carry it to the
registry until the request goes, ``covey ps`` and the tree show it, ``covey status`` shows each
scheduler, and a background child's wait goes to the session root's stream, not its own."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from covey.agent.progress import Progress
from covey.agent.runner import AgentRunner
from covey.agent.services import rate_waits_shown
from covey.cli.inspect import session_lines
from covey.cli.service_commands import status_text
from covey.definitions.definition import AgentDefinition
from covey.events import AssistantEvent, Event, RateLimitEvent
from covey.model.pricing import PriceTable
from covey.model.scripted import ScriptedModel
from covey.observe.live import rate_wait_text, tree_lines
from covey.runtime.limits import Limits
from covey.runtime.spec import AgentSpec
from tests.registry.fakes import FakeClock, FakePool, request, spec
from covey.registry.supervisor import Supervisor
from covey.teams.mailbox import Mailbox

WAIT_INFO = {"status": "allowed_warning", "apiLimit": "requests", "cause": "queue", "waitMs": 12_000, "agentId": "a"}


class Recorder:
    def __init__(self) -> None:
        self.tells: list[dict[str, Any]] = []
        self.relayed: list[Event] = []

    def tell_progress(self, agent_id: str, **fields: Any) -> None:
        self.tells.append(fields)

    def tell_relay(self, event: Event) -> None:
        self.relayed.append(event)


def _spec(*, depth: int, background: bool, root: Recorder) -> AgentSpec:
    runtime = SimpleNamespace(registry=root, root=root, limits=Limits())
    return AgentSpec(session_id="s", agent_id="a", definition=AgentDefinition(name="general-purpose", prompt="p"),
                     prompt="go", model_id="m", cwd=".", depth=depth, background=background, runtime=runtime)


def _wait_event() -> RateLimitEvent:
    return RateLimitEvent(session_id="s", rate_limit_info=dict(WAIT_INFO))


async def test_a_background_childs_wait_goes_to_the_root_and_into_its_figures_until_the_request_goes():
    root = Recorder()
    spec = _spec(depth=1, background=True, root=root)
    progress, emitted = Progress(spec, PriceTable.load(None)), []
    shown = rate_waits_shown(spec, emitted.append, progress)
    shown(_wait_event())
    assert [type(event) for event in root.relayed] == [RateLimitEvent] and emitted == []
    assert progress.rate_wait is not None and progress.rate_wait["limit"] == "requests"
    first_since = progress.rate_wait["since"]
    shown(_wait_event())  # a second wait of the same request keeps when it began
    assert progress.rate_wait["since"] == first_since
    await asyncio.sleep(0)
    await progress.observe(AssistantEvent(session_id="s", message={"content": [], "usage": {}}), writer=_NoWriter())
    assert progress.rate_wait is None and progress._figures()["rate_wait"] is None
    progress.close()


async def test_the_main_agents_and_a_sync_childs_waits_stay_in_their_own_stream():
    for depth, background in ((0, False), (1, False)):
        root = Recorder()
        spec = _spec(depth=depth, background=background, root=root)
        emitted: list[Event] = []
        progress = Progress(spec, PriceTable.load(None))
        rate_waits_shown(spec, emitted.append, progress)(_wait_event())
        assert root.relayed == [] and [type(event) for event in emitted] == [RateLimitEvent]
        progress.close()


class _NoWriter:
    async def append(self, *args: Any, **fields: Any) -> None:
        return None


async def test_a_relayed_event_joins_a_followed_run_and_is_dropped_when_nobody_follows(tmp_path):
    gate = asyncio.Event()

    class SlowModel(ScriptedModel):
        async def create(self, request: Any) -> Any:
            await gate.wait()
            return await super().create(request)

    model = SlowModel.from_dict({"rules": [{"when": {}, "reply": {"text": "done"}}]})
    runner = AgentRunner()
    spec = AgentSpec(session_id="s", agent_id="main", definition=AgentDefinition(name="t"), prompt="hi", model=model,
                     model_id="m", cwd=str(tmp_path), tool_names=[], transcript_dir=str(tmp_path))
    assert await runner.relay(_wait_event()) is False  # no run
    await runner.start(spec, follow=True)
    assert await runner.relay(_wait_event()) is True
    gate.set()
    seen = [event async for event in runner.follow()]
    assert any(isinstance(event, RateLimitEvent) for event in seen)
    assert await runner.relay(_wait_event()) is False  # the run has ended: nothing is kept for later


async def test_the_registry_keeps_a_wait_until_the_agent_says_it_went_and_ps_and_the_tree_show_it():
    sup = Supervisor(Limits(max_depth=2, max_concurrent=4, stall_ms=60_000), pool=FakePool(), mailbox=Mailbox(),
                     clock=FakeClock())
    await sup.register_main("main", "m", "/tmp")
    await sup.launch(request("a", background=True), spec("a"), follow=False, output_file="/t/a.jsonl")
    wait = {"limit": "input_tokens", "cause": "rate_limit_error", "since": 1000.0, "until": 1030.0}
    await sup.progress("a", rate_wait=wait, seq=1)
    record = await sup.record("a")
    assert record.rate_wait == wait
    assert rate_wait_text(record.rate_wait, "running", now=1012.0) == \
        "waiting for the rate limit (input tokens per minute, the API said 429), 12 s"
    assert "⏸ waiting for the rate limit" in session_lines("abcd1234", await sup.records())[2]
    tree = await sup.tree()
    assert "⏸ waiting for the rate limit" in tree_lines(tree)[1] and "⏸" not in tree_lines(tree)[0]
    ended = {**wait, "until": 1031.5}
    await sup.progress("a", rate_wait=None, rate_waits=[ended], seq=2)
    record = await sup.record("a")
    assert record.rate_wait is None and record.rate_waits == [ended]  # for the trace
    assert "⏸" not in "\n".join(session_lines("abcd1234", await sup.records()))
    await sup.close()


def test_covey_status_shows_each_rate_scheduler():
    status = {"pid": 42, "uptime_s": 75, "version": "0.1.0", "ray_address": "127.0.0.1:6379", "started_ray": True,
              "sessions": [], "idle_s": 5, "idle_timeout_s": 600, "socket": "/s", "log": "/l",
              "rate_limits": [{"identity": "http://127.0.0.1:8|0123abcd|sonnet-4", "queued": 7, "in_flight": 2,
                               "buckets": {"requests": {"limit": 60, "remaining": 0.2, "resets_at": None}},
                               "paused_until": None, "next_reset": None, "waiting": []}]}
    line = next(line for line in status_text(status).splitlines() if line.startswith("  rate"))
    assert line == "  rate      sonnet-4 at http://127.0.0.1:8: 7 waiting, 2 in flight; requests 0/60 left"
    status["rate_limits"][0].update(queued=0, leases=1)  # type: ignore[index]
    line = next(line for line in status_text(status).splitlines() if line.startswith("  rate"))
    assert line.startswith("  rate      sonnet-4 at http://127.0.0.1:8: 0 waiting, 2 in flight, 1 lent to gateways;")

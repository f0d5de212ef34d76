"""``SharedAdmission`` without Ray: what a run adds to each request, how a wait is emitted as a
``rate_limit_event``, a scheduler actor that died is found again, and the actor's name."""

from __future__ import annotations

import asyncio
from typing import Any, Mapping, cast

from covey.errors import AgentUnavailable
from covey.events import Event, RateLimitEvent
from covey.model.base import TokenUsage
from covey.ratelimit.actor import RateLimitHandle, SharedAdmission
from covey.ratelimit.lease import Lease, LeaseHolder, LeaseReport
from covey.ratelimit.ports import AdmitRequest, Admitted, RateDecision, Wait
from covey.ratelimit.scheduler import RateScheduler
from covey.ratelimit.schedulers import RateSchedulers
from covey.ratelimit.signals import Identity, RateLimitSettings, identity_for

KEY = "sk-ant-secret-value"
IDENTITY = identity_for("https://api.anthropic.com", KEY, "claude-sonnet-4-6")


class FakeHandle:
    """The handle's calls, on a plain scheduler; ``dead`` makes every call fail as a dead actor's."""

    def __init__(self, identity: Identity) -> None:
        self.scheduler = RateScheduler(identity, clock=lambda: 1000.0)
        self.dead = False
        self.seen: list[AdmitRequest] = []
        self.told: list[str] = []

    async def admit(self, request: AdmitRequest, settings: RateLimitSettings | None = None) -> RateDecision:
        if self.dead:
            raise AgentUnavailable("actor 'covey:ratelimit:x' is gone")
        self.seen.append(request)
        self.scheduler.hold(request.session_id, settings)
        return self.scheduler.admit(request)

    async def admit_leasing(self, request: AdmitRequest,
                            settings: RateLimitSettings | None = None) -> tuple[RateDecision, Lease | None]:
        decision = await self.admit(request, settings)
        return decision, self.scheduler.lease() if isinstance(decision, Admitted) else None

    async def report(self, report: LeaseReport) -> bool:
        return self.scheduler.report(report)

    def tell_reply(self, request_id: str, headers: Mapping[str, str], usage: TokenUsage | None) -> None:
        self.told.append(request_id)
        self.scheduler.record_reply(request_id, headers=headers, usage=usage)

    def cancel(self, request_id: str) -> None:
        self.scheduler.cancel(request_id)


def admission(made: list[FakeHandle], events: list[Event], foreground: bool = False) -> SharedAdmission:
    def handle_for(identity: Identity) -> RateLimitHandle:
        made.append(FakeHandle(identity))
        return cast(RateLimitHandle, made[-1])

    return SharedAdmission(session_id="s1", agent_id="agent-a", foreground=foreground,
                           settings=RateLimitSettings(requests_per_minute=1, patience_s=120), emit=events.append,
                           handle_for=handle_for, handles={}, leases=LeaseHolder())


def test_each_request_carries_the_runs_session_agent_place_and_patience() -> None:
    made: list[FakeHandle] = []
    shared = admission(made, [], foreground=True)
    asyncio.run(shared.admit(IDENTITY, AdmitRequest("r1", 10, 16)))
    asyncio.run(shared.admit(IDENTITY, AdmitRequest("r2", 10, 16, agent_id="from-the-request")))
    first, second = made[0].seen
    assert (first.session_id, first.agent_id, first.foreground, first.patience_s) == ("s1", "agent-a", True, 120)
    assert second.agent_id == "from-the-request"
    assert len(made) == 1  # one handle per identity, kept


def test_a_wait_is_emitted_as_a_claude_code_rate_limit_event() -> None:
    events: list[Event] = []
    made: list[FakeHandle] = []
    shared = admission(made, events)
    asyncio.run(shared.admit(IDENTITY, AdmitRequest("r1", 10, 16)))
    decision = asyncio.run(shared.admit(IDENTITY, AdmitRequest("r2", 10, 16)))
    assert isinstance(decision, Wait) and decision.limit == "requests"
    shared.waited(decision)
    [event] = events
    assert isinstance(event, RateLimitEvent) and event.agent_id == "agent-a"
    wire = event.wire()
    assert set(wire) == {"type", "rate_limit_info", "uuid", "session_id"}
    assert wire["type"] == "rate_limit_event" and wire["session_id"] == "s1"
    info = wire["rate_limit_info"]
    assert info["status"] == "allowed_warning" and info["apiLimit"] == "requests" and info["queuePosition"] == 0


def test_a_scheduler_actor_that_died_is_made_again() -> None:
    made: list[FakeHandle] = []
    shared = admission(made, [])
    asyncio.run(shared.admit(IDENTITY, AdmitRequest("r1", 10, 16)))
    made[0].dead = True
    decision: Any = asyncio.run(shared.admit(IDENTITY, AdmitRequest("r2", 10, 16)))
    assert len(made) == 2 and made[1].seen[0].request_id == "r2" and decision.request_id == "r2"


def test_a_reply_is_told_to_the_scheduler_without_waiting() -> None:
    made: list[FakeHandle] = []
    shared = admission(made, [])
    asyncio.run(shared.admit(IDENTITY, AdmitRequest("r1", 10, 16)))
    asyncio.run(shared.record_reply(IDENTITY, "r1", {}, TokenUsage(input_tokens=3, output_tokens=2)))
    assert made[0].told == ["r1"]


def test_one_holder_keeps_a_scheduler_per_identity_with_the_limits_its_runs_hold() -> None:
    schedulers = RateSchedulers(clock=lambda: 1000.0)
    first = schedulers.of(IDENTITY)
    first.hold("s1", RateLimitSettings(requests_per_minute=1))
    assert schedulers.of(identity_for("https://api.anthropic.com", KEY, "claude-sonnet-4-5")) is first  # one class
    first.hold("s2", RateLimitSettings(requests_per_minute=500))
    assert first.hand.limits == {"requests": 1}  # the lowest held applies
    other = schedulers.of(identity_for("https://api.anthropic.com", "other", "claude-sonnet-4-6"))
    assert other is not first and len(schedulers.snapshots()) == 2
    assert isinstance(first.admit(AdmitRequest("r1", 10, 16)), Admitted)
    assert isinstance(first.admit(AdmitRequest("r3", 10, 16)), Wait)  # one request a minute, taken: r3 waits
    assert isinstance(other.admit(AdmitRequest("r2", 10, 16)), Admitted)  # another identity's bucket
    assert KEY not in repr(schedulers.snapshots())  # the identity holds a hash of the credential only


def test_an_agent_runs_real_model_is_paced_the_main_agent_and_sync_children_in_front(monkeypatch) -> None:
    from covey.agent import services as agent_services
    from covey.gateway.anthropic import AnthropicModel
    from covey.model.scripted import ScriptedModel
    from tests.registry.fakes import spec

    model = AnthropicModel(api_key=KEY, base_url="http://127.0.0.1:1")
    assert agent_services.paced(model, spec(), print) is model  # no Ray: nobody to share a scheduler with
    monkeypatch.setattr(agent_services.ray, "is_initialized", lambda: True)
    scripted = ScriptedModel.from_turns([])
    assert agent_services.paced(scripted, spec(), print) is scripted
    env = {"COVEY_RATE_LIMIT_PATIENCE_S": "42"}
    flags = {}
    for name, fields in {"main": dict(depth=0), "sync": dict(depth=1), "background": dict(depth=1, background=True)
                         }.items():
        run_spec = spec(**fields)
        run_spec = run_spec.model_copy(update={"settings": run_spec.settings.model_copy(update={"env": env})})
        paced = agent_services.paced(model, run_spec, print)
        assert isinstance(paced.admission, SharedAdmission) and paced.admission.settings.patience_s == 42
        flags[name] = paced.admission.foreground
    assert flags == {"main": True, "sync": True, "background": False}
    assert model.admission is None  # the shared model is not changed


def test_while_the_scheduler_lends_requests_are_admitted_here_and_their_replies_told_together() -> None:
    made: list[FakeHandle] = []
    holder = LeaseHolder(flush_s=0.01)

    def handle_for(identity: Identity) -> RateLimitHandle:
        made.append(FakeHandle(identity))
        return cast(RateLimitHandle, made[-1])

    shared = SharedAdmission(session_id="s1", agent_id="agent-a", foreground=False, settings=RateLimitSettings(),
                             handle_for=handle_for, handles={}, leases=holder)
    reports: list[LeaseReport] = []

    async def scenario() -> None:
        await shared.admit(IDENTITY, AdmitRequest("r1", 10, 16))
        await shared.record_reply(IDENTITY, "r1", {}, None)  # the API sends no limits: a lease may be unlimited
        original = made[0].report

        async def report(news: LeaseReport) -> bool:
            reports.append(news)
            return await original(news)

        made[0].report = report  # type: ignore[method-assign]
        await shared.admit(IDENTITY, AdmitRequest("r2", 10, 16))  # asks, and is lent a lease with it
        for request_id in ("r3", "r4"):
            assert isinstance(await shared.admit(IDENTITY, AdmitRequest(request_id, 10, 16)), Admitted)
            await shared.record_reply(IDENTITY, request_id, {}, TokenUsage(input_tokens=3, output_tokens=2))
        await asyncio.sleep(0.05)

    asyncio.run(scenario())
    assert [request.request_id for request in made[0].seen] == ["r1", "r2"]  # r3, r4: no round trip
    assert made[0].told == ["r1"] and sum(len(report.replies) for report in reports) == 2

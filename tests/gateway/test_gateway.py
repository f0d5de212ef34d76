"""The model gateway's core and the agent's ``GatewayModel``, plain (no Ray): the agent's model
sends through the core's ``send`` as it would through the node's gateway actor, against the fake
Messages API on 127.0.0.1, and gets what the in-process model gives: the reply, the raw stream
events, the rate scheduler's waits as ``rate_limit_event`` lines, and the same errors."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import pytest

from covey.errors import AgentUnavailable, ModelAPIError, UserError
from covey.events import Event, RateLimitEvent
from covey.gateway import anthropic
from covey.gateway.actor import GatewayCore
from covey.gateway.anthropic import AnthropicModel
from covey.gateway.ports import Deferred, Failed, Pacing, Replied, StreamedEvent, Waited
from covey.gateway.remote_model import GatewayModel
from covey.model.anthropic_config import AnthropicConfig
from covey.model.base import ModelRequest
from covey.ratelimit.actor import rate_limit_line
from covey.ratelimit.admission import LocalAdmission
from covey.ratelimit.ports import RateRefused, Wait
from covey.ratelimit.signals import RateLimitSettings
from tests.fake_messages_api import FakeMessagesAPI, fake_api  # noqa: F401  (fixture)
from tests.fake_ratelimited_api import FakeRateLimitedAPI

MODEL = "claude-sonnet-4-6"
PACING = Pacing(session_id="s1", agent_id="a1", foreground=True, settings=RateLimitSettings())


def request(text: str = "hi") -> ModelRequest:
    return ModelRequest(model=MODEL, messages=[{"role": "user", "content": text}], max_tokens=16, agent_id="a1")


def config_for(url: str) -> AnthropicConfig:
    return AnthropicConfig("test-key", None, url, max_retries=1, retry_backoff_s=0.001)


def local_admission(pacing: Pacing, emit: Callable[[Event], None]) -> LocalAdmission:
    """The run's admission over a plain scheduler, its waits emitted as the shared one's are."""

    def waited(decision: Wait | RateRefused) -> None:
        emit(rate_limit_line(decision, session_id=pacing.session_id, agent_id=pacing.agent_id))

    return LocalAdmission(pacing.settings, on_wait=waited)


async def items_of(core: GatewayCore, config: AnthropicConfig, stream_events: bool,
                   pacing: Pacing | None = None) -> list[Any]:
    return [item async for item in core.send(config, request(), pacing, stream_events)]


async def test_the_core_streams_the_raw_events_then_the_reply(fake_api):
    fake_api.replies.append({"text": "Hello there"})
    items = await items_of(GatewayCore(), config_for(fake_api.url), stream_events=True)
    events = [item.event["type"] for item in items if isinstance(item, StreamedEvent)]
    assert events[0] == "message_start" and events[-1] == "message_stop" and "content_block_delta" in events
    assert isinstance(items[-1], Replied) and items[-1].message.content[0].text == "Hello there"


async def test_without_stream_events_only_the_reply_comes_back(fake_api):
    fake_api.replies.append({"text": "quiet"})
    items = await items_of(GatewayCore(), config_for(fake_api.url), stream_events=False)
    assert [type(item) for item in items] == [Replied]


async def test_an_error_comes_back_as_the_error_the_model_raises_in_process(fake_api):
    fake_api.replies.append(("error", 401, None))
    config = config_for(fake_api.url)
    with pytest.raises(ModelAPIError) as in_process:
        await AnthropicModel.of(config).create(request())
    (failed,) = await items_of(GatewayCore(), config, stream_events=False)
    assert isinstance(failed, Failed) and type(failed.error) is ModelAPIError
    assert str(failed.error) == str(in_process.value) and failed.error.status_code == 401
    with pytest.raises(ModelAPIError, match="401") as through:
        await GatewayModel(config, send=GatewayCore().send).create(request())
    assert str(through.value) == str(in_process.value)


async def test_the_agents_model_gets_the_reply_the_events_and_the_waits():
    with FakeRateLimitedAPI() as api:
        api.overload(1, retry_after_s=1)  # a 529 burst: the request waits it out in the queue
        emitted: list[Event] = []
        streamed: list[dict[str, Any]] = []
        model = GatewayModel(config_for(api.url), pacing=PACING, emit=emitted.append,
                             send=GatewayCore(local_admission).send)
        message = await model.create(request().model_copy(update={"on_stream": streamed.append}))
        assert message.content[0].text == "ok"
        assert (api.count(529), api.count(200)) == (1, 1)
    assert [type(event) for event in emitted] == [RateLimitEvent]
    assert emitted[0].session_id == "s1" and emitted[0].agent_id == "a1"
    assert streamed[0]["type"] == "message_start" and streamed[-1]["type"] == "message_stop"


async def test_the_core_puts_waits_on_the_stream_before_the_reply():
    with FakeRateLimitedAPI() as api:
        api.overload(1, retry_after_s=1)
        items = await items_of(GatewayCore(local_admission), config_for(api.url), False, PACING)
    assert [type(item) for item in items] == [Waited, Replied]


async def test_a_direct_request_is_one_answer_and_one_that_would_wait_is_deferred_unsent():
    with FakeRateLimitedAPI() as api:
        config, core = config_for(api.url), GatewayCore(local_admission)
        assert isinstance(await core.direct(config, request(), PACING), Replied)
        api.overload(1, retry_after_s=1)  # the next request is refused with 529: the identity pauses 1 s
        refused = await core.direct(config, request(), PACING)
        assert isinstance(refused, Deferred)
        [shown] = refused.waited  # the wait the refusal began, shown at once: the stream may find it over
        info = shown.rate_limit_info
        assert (info["cause"], info["status"], shown.agent_id) == ("overloaded_error", "rejected", "a1")
        sent = len(api.log)
        queued: list[Any] = []
        paused = LocalAdmission(on_wait=queued.append)
        paused.scheduler(AnthropicModel.of(config)._identity(MODEL)).record_refusal("x", 529, {"retry-after": "5"})
        deferred = await GatewayCore(lambda pacing, emit: paused).direct(config, request(), PACING)
        assert isinstance(deferred, Deferred) and len(api.log) == sent  # nothing was sent
        assert deferred.waited == ()  # the stream it goes again as shows this wait
        assert all(not scheduler._queue for scheduler in paused.schedulers.values())  # its place given up
        assert queued == []  # its waits are shown by the stream it goes again as


class Parked:
    """A model whose request never ends, until it is cancelled."""

    def __init__(self) -> None:
        self.started, self.cancelled = asyncio.Event(), asyncio.Event()

    async def create(self, request: ModelRequest) -> Any:
        self.started.set()
        try:
            await asyncio.Event().wait()
        finally:
            self.cancelled.set()


async def test_an_agent_that_gives_up_cancels_its_request_in_the_gateway(monkeypatch):
    config, parked = config_for("http://127.0.0.1:1"), Parked()
    monkeypatch.setitem(anthropic._MODELS, config, parked)
    task = asyncio.create_task(GatewayModel(config, send=GatewayCore().send).create(request()))
    await asyncio.wait_for(parked.started.wait(), 5)
    task.cancel()
    await asyncio.wait_for(parked.cancelled.wait(), 5)
    assert task.cancelled()


class Unpicklable(Exception):
    def __init__(self) -> None:
        super().__init__("a callback inside")
        self.callback = lambda: None  # pickling the error pickles its attributes: a lambda does not


class Failing:
    async def create(self, request: ModelRequest) -> Any:
        raise Unpicklable()


async def test_an_error_that_cannot_travel_becomes_a_model_api_error(monkeypatch):
    config = config_for("http://127.0.0.1:1")
    monkeypatch.setitem(anthropic._MODELS, config, Failing())
    with pytest.raises(ModelAPIError, match="Unpicklable: a callback inside"):
        await GatewayModel(config, send=GatewayCore().send).create(request())


async def test_a_gateway_that_goes_mid_request_fails_the_request_as_a_model_error():
    async def send(*args: Any) -> Any:
        yield StreamedEvent({"type": "message_start"})
        raise AgentUnavailable("actor 'covey:gateway:n1' is gone: killed")

    with pytest.raises(ModelAPIError, match="gateway failed during the request"):
        await GatewayModel(config_for("http://127.0.0.1:1"), send=send).create(request())


def test_the_request_that_travels_carries_no_callback():
    sent: list[ModelRequest] = []

    async def send(config: Any, bare: ModelRequest, pacing: Any, stream_events: bool) -> Any:
        sent.append(bare)
        assert stream_events
        yield Replied(message=None)  # type: ignore[arg-type]  # the test reads the request only

    asyncio.run(GatewayModel(config_for("http://x"), send=send).create(
        request().model_copy(update={"on_stream": print})))
    assert sent[0].on_stream is None


def test_an_agent_sends_a_travelled_config_through_the_gateway_under_ray_only(monkeypatch):
    from covey.agent import services as agent_services
    from tests.registry.fakes import spec

    config = config_for("http://127.0.0.1:1")
    built = agent_services.model_of(config, None)  # no Ray: this process's own model
    assert isinstance(built, AnthropicModel) and built.config == config
    monkeypatch.setattr(agent_services.ray, "is_initialized", lambda: True)
    assert agent_services.model_of(config, None) is config
    flags = {}
    for name, fields in {"main": dict(depth=0), "background": dict(depth=1, background=True)}.items():
        paced = agent_services.paced(config, spec(**fields), print)
        assert isinstance(paced, GatewayModel) and paced.config == config and paced.emit is print
        flags[name] = paced.pacing.foreground if paced.pacing else None
    assert flags == {"main": True, "background": False}


def test_a_model_named_in_an_agent_is_built_as_a_config_from_the_runs_env(monkeypatch):
    from covey.agent import services as agent_services

    monkeypatch.setattr(agent_services.ray, "is_initialized", lambda: True)
    env = {"ANTHROPIC_API_KEY": "run-key", "ANTHROPIC_BASE_URL": "http://127.0.0.1:2"}
    assert agent_services.model_of("sonnet", env) == AnthropicConfig("run-key", None, "http://127.0.0.1:2")


async def test_a_keyless_config_is_sent_with_the_credential_the_holder_gives_back(fake_api):
    """An agent's config names its credential; the gateway gets it from the cluster's holder
    (here a plain ``Credentials``) and the request carries it. An unknown one fails the request."""
    from covey.model.anthropic_config import Credentials

    holder = Credentials()
    keyless = holder.remember(config_for(fake_api.url))

    async def keyed(config: AnthropicConfig) -> AnthropicConfig:
        found = holder.keyed(config)
        if found is None:
            raise UserError("the API credential of this run is not known on this Ray cluster")
        return found

    fake_api.replies.append({"text": "sent with the key"})
    core = GatewayCore(keyed=keyed)
    (replied,) = await items_of(core, keyless, stream_events=False)
    assert isinstance(replied, Replied)
    assert [sent.removeprefix("Bearer ") for sent in fake_api.credentials] == ["test-key"]  # as the SDK sends it
    stranger = AnthropicConfig(None, None, fake_api.url, credential_id="0" * 64)
    (failed,) = await items_of(core, stranger, stream_events=False)
    assert isinstance(failed, Failed) and "not known on this Ray cluster" in str(failed.error)
    assert len(fake_api.requests) == 1  # nothing was sent without a credential

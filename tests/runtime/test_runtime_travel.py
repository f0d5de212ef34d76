"""The session runtime travels once per receiver and key, not inside every spec (no Ray: fake actors)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from covey.agent.actor import AgentRunner, _AgentActor
from covey.agent.handle import AgentHandle
from covey.definitions.definition import AgentDefinition
from covey.errors import AgentUnavailable, LimitExceeded
from covey.registry.core import Registry
from covey.registry.handle import RegistryHandle
from covey.runtime.answers import Launched, NeedRuntime, Refused
from covey.runtime.payloads import LaunchCall
from covey.runtime.ports import SessionRuntime
from covey.runtime.records import LaunchRequest
from covey.runtime.spec import AgentSpec
from covey.runtime.travel import arrived, travelling


class _Method:
    """Stands for a Ray actor method: records each call's arguments."""

    def __init__(self, answer: Any) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.answer = answer

    def options(self, **_: Any) -> "_Method":
        return self

    def remote(self, *args: Any) -> Any:
        self.calls.append(args)

        async def reply() -> Any:
            await asyncio.sleep(0.01)
            return self.answer(*args) if callable(self.answer) else self.answer

        return reply()


class _StreamMethod(_Method):
    """Stands for a streaming Ray actor method: ``remote`` gives an async iterator of refs."""

    def remote(self, *args: Any) -> Any:
        self.calls.append(args)

        async def refs() -> Any:
            for index, answer in enumerate(self.answer(*args)):
                await asyncio.sleep(0.01)
                yield _ready((index, answer))

        return refs()


async def _ready(value: Any) -> Any:
    return value


class _FakeActor:
    def __init__(self, **methods: _Method) -> None:
        self.__dict__.update(methods)


def _runtime() -> SessionRuntime:
    return SessionRuntime(session_id="s", registry=None, mailbox=None,
                          definitions={"x": AgentDefinition(name="x", description="d" * 2000)})


def _spec(runtime: SessionRuntime | None, agent_id: str = "agent-1") -> AgentSpec:
    return AgentSpec(session_id="s", agent_id=agent_id, definition=AgentDefinition(name="t"), prompt="hi",
                     model_id="m", cwd="/tmp", tool_names=[], runtime=runtime)


def _request(agent_id: str) -> LaunchRequest:
    return LaunchRequest(agent_id=agent_id, parent_agent_id="main", depth=1, description="d", prompt="p",
                         agent_type="general-purpose", model="m", cwd="/tmp", background=True)


async def test_an_agent_actor_is_sent_the_runtime_once_per_key():
    start = _Method(answer=lambda spec, follow, runtime, key: spec.agent_id)
    handle = AgentHandle(_FakeActor(start=start))
    runtime = _runtime()
    await handle.start(_spec(runtime, "agent-1"))
    await handle.start(_spec(None, "agent-2"), runtime=runtime)
    runtime.set_root(None)  # a new Session.run: same session, new content
    await handle.start(_spec(runtime, "agent-3"))
    sent = [(spec.runtime, travelling, key) for spec, _, travelling, key in start.calls]
    assert all(spec_runtime is None for spec_runtime, _, _ in sent)  # never inside the spec
    assert [travelling is runtime for _, travelling, _ in sent] == [True, False, True]
    assert sent[1][2] == sent[0][2] != sent[2][2] == runtime.key


async def test_the_agent_actor_restores_the_runtime_it_holds_and_refuses_a_key_it_does_not(monkeypatch):
    started: list[AgentSpec] = []

    async def record(self: AgentRunner, spec: AgentSpec, *, follow: bool = False) -> str:
        started.append(spec)
        return spec.agent_id

    monkeypatch.setattr(AgentRunner, "start", record)  # the runner's own start, under the actor's
    actor = _AgentActor()
    runtime = _runtime()
    await actor.start(_spec(None, "agent-1"), False, runtime, runtime.key)
    await actor.start(_spec(None, "agent-2"), False, None, runtime.key)
    assert started[1].runtime is runtime
    with pytest.raises(RuntimeError, match="does not hold session runtime"):
        await actor.start(_spec(None, "agent-3"), False, None, "another-key")
    assert len(started) == 2


def _launched(request: LaunchRequest) -> Launched:
    return Launched(record=Registry().admit(request))


def _args(launch: LaunchCall) -> tuple[Any, ...]:
    """A batched launch as the positional arguments of a single ``launch`` call."""
    return (launch.request, launch.spec, launch.follow, launch.lane, launch.output_file, launch.runtime_key)


def _registry(answer: Any) -> tuple[RegistryHandle, _Method, _Method]:
    """A registry handle on a fake actor whose ``launch`` and ``launch_many`` both answer with ``answer``."""
    launch = _Method(answer=answer)
    launch_many = _StreamMethod(answer=lambda launches: [answer(*_args(launch)) for launch in launches])
    return RegistryHandle(_FakeActor(launch=launch, launch_many=launch_many)), launch, launch_many


async def test_twenty_launches_at_once_send_the_runtime_to_the_registry_once():
    registry, launch, launch_many = _registry(lambda request, *rest: _launched(request))
    runtime = _runtime()
    answers = await asyncio.gather(*(registry.launch(_request(f"agent-{i}"), _spec(runtime, f"agent-{i}"))
                                     for i in range(20)))
    assert [a.record.agent_id for a in answers] == [f"agent-{i}" for i in range(20)]
    sent = [args for args in launch.calls] + [_args(launch) for (batch,) in launch_many.calls for launch in batch]
    with_runtime = [args for args in sent if args[1].runtime is not None]
    assert len(with_runtime) == 1 and with_runtime[0][1].runtime is runtime
    assert len(sent) == 20 and all(args[-1] == runtime.key for args in sent if args[1].runtime is None)


async def test_launches_made_together_reach_the_registry_in_one_call_and_each_gets_its_own_answer():
    def answer(request: LaunchRequest, *rest: Any) -> Any:
        if request.agent_id.endswith("7"):
            return Refused(kind="concurrency", text="refused: over the limit")
        return _launched(request)

    registry, launch, launch_many = _registry(answer)
    runtime = _runtime()
    await registry.launch(_request("agent-0"), _spec(runtime, "agent-0"))  # the first sends the runtime
    results = await asyncio.gather(*(registry.launch(_request(f"agent-{i}"), _spec(runtime, f"agent-{i}"))
                                     for i in range(1, 11)), return_exceptions=True)
    assert len(launch_many.calls) == 1 and len(launch_many.calls[0][0]) == 10
    assert [launch.request.agent_id for launch in launch_many.calls[0][0]] == [f"agent-{i}" for i in range(1, 11)]  # in order
    assert isinstance(results[6], LimitExceeded) and "over the limit" in str(results[6])
    assert results[6].limit == "concurrency"
    assert [r.record.agent_id for i, r in enumerate(results) if i != 6] == [f"agent-{i}" for i in range(1, 11) if i != 7]


async def test_the_registry_answers_each_launch_of_a_batch_as_soon_as_it_is_ready():
    """A launch whose actor is warm must not wait for one whose actor is being created:
    its sync parent could not follow it, and its actor could not be recycled."""
    from covey.registry.supervisor import Supervisor

    class Registry:
        async def launch(self, request: LaunchRequest, *rest: Any) -> str:
            await asyncio.sleep(0.3 if request.agent_id == "slow" else 0.0)
            return request.agent_id

    launches = [LaunchCall(_request("slow"), None), LaunchCall(_request("warm"), None)]
    order = [answer async for answer in Supervisor.launch_many(Registry(), launches)]  # type: ignore[arg-type]
    assert order == [(1, "warm"), (0, "slow")]


async def test_a_batch_to_a_registry_that_is_gone_fails_every_launch_in_it():
    registry, _, launch_many = _registry(lambda request, *rest: _launched(request))
    runtime = _runtime()
    await registry.launch(_request("agent-0"), _spec(runtime, "agent-0"))

    def gone(launches: Any) -> Any:
        raise AgentUnavailable("actor 'registry' is gone")

    launch_many.answer = gone
    results = await asyncio.gather(*(registry.launch(_request(f"agent-{i}"), _spec(runtime, f"agent-{i}"))
                                     for i in range(1, 4)), return_exceptions=True)
    assert all(isinstance(r, AgentUnavailable) for r in results)


async def test_a_registry_that_lacks_the_named_runtime_gets_it_whole():
    held: set[str] = set()

    def answer(request: LaunchRequest, spec: AgentSpec, *rest: Any) -> Any:
        if spec.runtime is not None:
            held.add(spec.runtime.key)
            return _launched(request)
        return _launched(request) if rest[-1] in held else NeedRuntime()

    registry, launch, _ = _registry(answer)
    runtime = _runtime()
    await registry.launch(_request("agent-1"), _spec(runtime, "agent-1"))
    held.clear()  # as if the registry had let this runtime go
    launched = await registry.launch(_request("agent-2"), _spec(runtime, "agent-2"))
    assert launched.record.agent_id == "agent-2" and launched.actor is None
    assert [args[1].runtime is runtime for args in launch.calls] == [True, False, True]


def test_a_spec_travels_without_the_runtimes_model_and_arrives_with_it():
    runtime = _runtime()
    runtime.model = object()
    spec = _spec(runtime).model_copy(update={"model": runtime.model})
    sent = travelling(spec)
    assert sent.runtime is None and sent.model is None
    back = arrived(sent, runtime)
    assert back.runtime is runtime and back.model is runtime.model
    own = _spec(runtime).model_copy(update={"model": "claude-haiku"})  # its own model stays with it
    assert travelling(own).model == "claude-haiku" and arrived(travelling(own), runtime).model == "claude-haiku"


def test_a_spec_travels_without_the_runtimes_environment_and_arrives_with_it():
    runtime = _runtime()
    runtime.env = {"PATH": "/usr/bin", "FOO": "bar"}
    spec = _spec(runtime)
    spec = spec.model_copy(update={"settings": spec.settings.model_copy(update={"env": dict(runtime.env)})})
    sent = travelling(spec)
    assert sent.settings.env is None
    assert arrived(sent, runtime).settings.env == {"PATH": "/usr/bin", "FOO": "bar"}
    other = spec.model_copy(update={"settings": spec.settings.model_copy(update={"env": {"FOO": "own"}})})
    assert travelling(other).settings.env == {"FOO": "own"}  # not the runtime's: it travels with the spec


async def test_a_runtime_put_in_the_object_store_travels_as_its_ref():
    start = _Method(answer=lambda spec, follow, runtime, key: spec.agent_id)
    handle = AgentHandle(_FakeActor(start=start))
    runtime, ref = _runtime(), object()  # stands for the ObjectRef Ray resolves before the call
    await handle.start(_spec(None, "agent-1"), runtime=runtime, runtime_ref=ref)
    await handle.start(_spec(None, "agent-2"), runtime=runtime, runtime_ref=ref)
    assert [travelling for _, _, travelling, _ in start.calls] == [ref, None]


async def test_a_background_run_is_one_call_sent_at_once_that_answers_at_its_end():
    run_detached = _Method(answer=lambda spec, runtime, key: ("report", True))
    handle = AgentHandle(_FakeActor(run_detached=run_detached))
    runtime = _runtime()
    pending = handle.run_detached(_spec(runtime, "agent-1"))
    assert len(run_detached.calls) == 1  # sent before anyone awaits it: a cancel sent next comes after it
    assert await pending == ("report", True)
    await handle.run_detached(_spec(runtime, "agent-2"))
    sent = [(spec.agent_id, travelling is runtime, key) for spec, travelling, key in run_detached.calls]
    assert sent == [("agent-1", True, runtime.key), ("agent-2", False, runtime.key)]  # the runtime once


async def test_the_actor_runs_a_detached_spec_to_its_end_and_a_cancel_right_behind_it_stops_it(tmp_path):
    from covey.model.scripted import ScriptedModel

    def spec(reply: dict[str, Any], latency_s: float = 0.0) -> AgentSpec:
        model = ScriptedModel.from_dict({"rules": [{"when": {}, "reply": reply, "latency_s": latency_s}]})
        return AgentSpec(session_id="s", agent_id="agent-d", definition=AgentDefinition(name="t"), prompt="hi",
                         model=model, model_id="m", cwd=str(tmp_path), tool_names=[], transcript_dir=str(tmp_path))

    actor = _AgentActor()
    finished = await actor.run_detached(spec({"text": "done"}))
    assert finished.report.status == "completed" and finished.report.text == "done" and finished.reset == "clean"
    # A cancel right behind the call: the run has not taken a step yet.
    pending = asyncio.ensure_future(actor.run_detached(spec({"text": "late"}, latency_s=30)))
    await asyncio.sleep(0)
    assert await actor.cancel("killed", "stopped by its owner", "agent-d")
    report = (await asyncio.wait_for(pending, 10)).report  # it never took a step, and still reports
    assert report.status == "killed" and "stopped by its owner" in report.text
    assert await actor.reset()  # and leaves nothing behind
    # A cancel that overtakes the call (an async actor may start calls out of order).
    assert await actor.cancel("killed", "killed before it arrived", "agent-d")
    finished = await actor.run_detached(spec({"text": "late"}, latency_s=30))  # at once, not in 30 s
    report = finished.report
    assert report.status == "killed" and "before it arrived" in report.text and finished.reset == "clean"
    # Kept only for that agent: another agent's run on this actor is not cancelled by it.
    assert await actor.cancel("killed", "for someone else", "agent-other")
    report = (await actor.run_detached(spec({"text": "done"}))).report
    assert report.status == "completed"


def test_the_root_agent_travels_by_name_and_is_looked_up_only_when_used(monkeypatch):
    import pickle

    from covey.agent import handle as handle_module
    from covey.agent.handle import NamedAgentHandle

    runtime = _runtime()
    runtime.set_root(AgentHandle(_FakeActor(), "covey:s:agent-1", node="n1"))
    arrived_runtime = pickle.loads(pickle.dumps(runtime))
    root = arrived_runtime.root
    assert isinstance(root, NamedAgentHandle) and root.name == "covey:s:agent-1" and root.node == "n1"
    assert root._actor is None  # no actor handle travelled
    assert isinstance(runtime.root, AgentHandle) and not isinstance(runtime.root, NamedAgentHandle)  # the sender's own
    looked_up: list[str] = []
    found = _FakeActor()
    monkeypatch.setattr(handle_module.ray, "get_actor", lambda name: looked_up.append(name) or found)
    assert root.actor is found and root.actor is found and looked_up == ["covey:s:agent-1"]  # once


async def test_a_root_that_is_gone_denies_the_prompt_instead_of_raising(monkeypatch):
    from covey.agent import handle as handle_module
    from covey.agent.handle import NamedAgentHandle

    def missing(name: str) -> Any:
        raise ValueError(f"Failed to look up actor with name '{name}'")

    monkeypatch.setattr(handle_module.ray, "get_actor", missing)
    assert await NamedAgentHandle("covey:s:agent-9").ask({"tool_name": "Bash"}) is False


def test_a_sealed_model_of_a_class_defined_in_a_script_travels_by_value():
    """A driver script's own model class (``__main__``, or local like this one) cannot be
    pickled by reference: the runtime seals it as Ray pickles arguments (cloudpickle)."""
    import pickle

    from covey.runtime.travel import Sealed

    class ScriptModel:
        def __init__(self) -> None:
            self.rules = ["say ok"]

    sealed = pickle.loads(pickle.dumps(Sealed.of(ScriptModel())))
    assert sealed.open().rules == ["say ok"]

"""The agent actor *is* its runner: each call it answers is declared once, on ``AgentRunner``,
and the actor adds only what an actor has (the runtime it keeps, its process's identity)."""

from __future__ import annotations

from covey.agent.actor import _AgentActor
from covey.agent.runner import AgentRunner


def test_the_agent_actor_forwards_nothing_to_its_runner():
    assert issubclass(_AgentActor, AgentRunner)
    own = {name for name, value in vars(_AgentActor).items() if callable(value) and not name.startswith("__")}
    assert own == {"start", "run_detached", "_arrived", "ping", "pid", "loaded_modules"}
    # Of the runner's calls only start is redefined: it takes the spec as it travels (with its
    # runtime, or the key of one the actor holds) and hands the runner the spec as it arrived.
    assert {name for name in own if name in vars(AgentRunner)} == {"start"}

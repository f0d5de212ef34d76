"""Each actor class is made once per process (``covey.ray.handle.remote_class``): every
``ray.remote`` gives a class a new random function id, and a process meeting a handle of an
actor whose class it has not seen under that id loads the class again from the GCS."""

from __future__ import annotations

from covey.agent.actor import agent_actor_class
from covey.ray.handle import actor_class
from covey.registry.actor import registry_actor_class
from covey.teams.mailbox_actor import mailbox_actor_class
from covey.teams.team_actors import board_actor_class, roster_actor_class


class _Probe:
    async def ping(self) -> str:
        return "pong"


def function_id(cls: object) -> bytes:
    return cls.__ray_metadata__.actor_creation_function_descriptor.function_id.binary()  # type: ignore[attr-defined]


def test_each_session_actor_class_is_made_once_so_its_function_id_never_changes() -> None:
    for make in (agent_actor_class, registry_actor_class, mailbox_actor_class, roster_actor_class, board_actor_class):
        assert make() is make(), make
        assert function_id(make()) == function_id(make())


def test_other_options_make_another_class_and_the_same_options_the_same() -> None:
    plain = actor_class(_Probe)
    assert actor_class(_Probe) is plain
    assert actor_class(_Probe, max_concurrency=5) is actor_class(_Probe, max_concurrency=5)
    assert actor_class(_Probe, max_concurrency=5) is not plain
    assert function_id(actor_class(_Probe, max_concurrency=5)) != function_id(plain)

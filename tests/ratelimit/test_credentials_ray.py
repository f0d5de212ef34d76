"""On a real Ray the API credential is obtainable by the node's gateway only: the holder
(``covey:ratelimits``) and the gateway refuse Ray's generic ``__ray_call__``, the holder never
answers with a credential (it gives it to a node's named gateway), the actor tables show none,
and a keyless config naming another server is not sent there with it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
import ray
from ray.exceptions import RayTaskError

from covey.errors import UserError
from covey.gateway.actor import gateway_name, node_gateway
from covey.gateway.ports import Failed, Replied
from covey.model.anthropic_config import AnthropicConfig, Credential
from covey.model.base import ModelRequest
from covey.ratelimit import credentials
from covey.ratelimit.actor import ACTOR_NAME
from covey.ray.handle import GenericCallRefused
from covey.ray.local import NAMESPACE
from tests.fake_messages_api import FakeMessagesAPI

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_session")]

KEY = "sk-ant-only-the-gateway-gets-this"


def request() -> ModelRequest:
    return ModelRequest(model="claude-sonnet-4-6", messages=[{"role": "user", "content": "hi"}], max_tokens=16,
                        agent_id="a1")


@pytest.fixture
def keyless():
    """A keyless config whose credential the node's gateway was given (so the holder has it)."""
    with FakeMessagesAPI(replies=[{"text": "ok"}] * 4) as api:
        config = AnthropicConfig(KEY, None, api.url, max_retries=0)
        yield asyncio.run(node_gateway().remember_credential(config)), api


def node_id() -> str:
    return ray.get_runtime_context().get_node_id()


def _refused(call) -> None:
    with pytest.raises(RayTaskError) as caught:
        ray.get(call, timeout=60)
    assert isinstance(caught.value, GenericCallRefused) and KEY not in str(caught.value)


@pytest.mark.parametrize("name", [ACTOR_NAME, "gateway"])
@pytest.mark.parametrize("probe", [
    lambda self: repr(vars(self)),
    lambda self: __import__("covey.ratelimit.credentials", fromlist=["_KEYED"])._KEYED.credential,
    lambda self: [repr(o) for o in __import__("gc").get_objects() if "Credential" in type(o).__name__],
    lambda self: open(f"/proc/{__import__('os').getpid()}/environ").read(),
])
def test_a_generic_call_on_an_actor_holding_the_key_is_refused(keyless, name, probe):
    actor = ray.get_actor(gateway_name(node_id()) if name == "gateway" else name, namespace=NAMESPACE)
    _refused(actor.__ray_call__.remote(probe))


def test_the_holder_has_no_method_that_answers_with_a_credential(keyless):
    holder = ray.get_actor(ACTOR_NAME, namespace=NAMESPACE)
    with pytest.raises(AttributeError):
        holder.credential.remote(keyless[0].credential_id)
    answer = ray.get(holder.send_credential.remote(keyless[0].credential_id, node_id()), timeout=60)
    assert answer is True  # given to this node's gateway, not to the caller


@pytest.mark.parametrize("node", ["0" * 56, "not-a-node"])
def test_the_holder_gives_a_credential_to_no_node_that_is_not_live(keyless, node):
    holder = ray.get_actor(ACTOR_NAME, namespace=NAMESPACE)
    assert ray.get(holder.send_credential.remote(keyless[0].credential_id, node), timeout=60) is False


def test_a_process_that_is_not_a_gateway_cannot_have_the_holder_give_it_the_key(keyless, monkeypatch):
    monkeypatch.setattr(credentials, "_KEYED", type(credentials._KEYED)())
    with pytest.raises(UserError, match="not known on this Ray cluster"):
        asyncio.run(credentials.keyed(keyless[0]))


def test_remembering_answers_keyless(keyless):
    config, _ = keyless
    assert not config.keyed and config.credential_id and KEY not in repr(config)


def test_the_actor_tables_show_no_key(keyless):
    tables = repr(ray._private.state.state.actor_table(None)) + repr(ray.util.list_named_actors(all_namespaces=True))
    assert KEY not in tables


def test_the_gateway_sends_the_key_to_its_own_server_only(keyless):
    config, api = keyless
    gateway = node_gateway()
    with FakeMessagesAPI(replies=[{"text": "stolen"}]) as other:
        elsewhere = AnthropicConfig(None, None, other.url, max_retries=0, credential_id=config.credential_id)
        (failed,) = asyncio.run(_items(gateway, elsewhere))
        assert not other.requests
    assert isinstance(failed, Failed) and "not given for" in str(failed.error)
    (replied,) = asyncio.run(_items(gateway, config))
    assert isinstance(replied, Replied) and api.credentials[-1].removeprefix("Bearer ") == KEY


def test_a_forged_credential_given_to_the_gateway_opens_no_other_server(keyless):
    config, _ = keyless
    gateway = node_gateway()
    forged = Credential(KEY + "-forged", None, frozenset({"http://127.0.0.1:9"}))
    assert asyncio.run(gateway.accept_credential(forged)) is True  # kept under its own id
    elsewhere = AnthropicConfig(None, None, "http://127.0.0.1:9", max_retries=0, credential_id=config.credential_id)
    (failed,) = asyncio.run(_items(gateway, elsewhere))
    assert isinstance(failed, Failed) and "not given for" in str(failed.error)


def test_the_gateway_and_holder_processes_have_no_key_in_their_environment(keyless):
    pids = {int(line.split()[0]) for line in os.popen("ps -eo pid=,args=") if "ray::" in line}
    for pid in pids:
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        assert KEY.encode() not in environ


async def _items(gateway, config):
    return [item async for item in gateway.send(config, request(), None, stream_events=False)]


def test_what_agent_actors_are_sent_holds_no_key_though_the_run_s_environment_has_it(tmp_path):
    from ray import cloudpickle

    from covey.runtime.travel import travelling
    from covey.session import Session

    with FakeMessagesAPI(replies=[]) as api:
        env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.url, "KEPT": "yes"}
        session = Session(cwd=str(tmp_path), env=env, pool_size=0, transcript_dir=str(tmp_path / "t"), service=False)
        try:
            runtime = asyncio.run(session.start())
            spec = session.main_spec("hi", runtime)
            sent = cloudpickle.dumps(travelling(spec)) + cloudpickle.dumps(runtime)
        finally:
            session.close()
    assert KEY.encode() not in sent and runtime.env is not None and runtime.env["KEPT"] == "yes"
    assert session.env["ANTHROPIC_API_KEY"] == KEY  # the driver keeps it

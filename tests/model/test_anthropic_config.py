"""The real model as it travels: a config that imports no SDK, and still answers as the model."""

import pickle
import subprocess
import sys

import pytest

from covey.errors import UserError
from covey.gateway.anthropic import AnthropicModel
from covey.model.anthropic_config import AnthropicConfig
from covey.model.base import ModelRequest
from tests.fake_messages_api import fake_api  # noqa: F401  (fixture)

REQUEST = ModelRequest(model="claude-test-1", messages=[{"role": "user", "content": "hi"}])


def test_a_pickled_model_is_its_config_with_every_setting():
    model = AnthropicModel(api_key="k", base_url="http://127.0.0.1:9", max_retries=2, timeout_s=30,
                           retry_backoff_s=0.1, fallback_model="claude-fallback-1")
    assert pickle.loads(pickle.dumps(model)) == AnthropicConfig(
        "k", None, "http://127.0.0.1:9", 2, 30, 0.1, "claude-fallback-1")


def test_unpickling_a_model_does_not_import_the_sdk():
    blob = pickle.dumps(AnthropicModel(api_key="k", base_url="http://127.0.0.1:9"))
    code = ("import pickle, sys; config = pickle.loads(sys.stdin.buffer.read()); "
            "print(type(config).__name__, 'anthropic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, check=True)
    assert out.stdout.decode().split() == ["AnthropicConfig", "False"]


def test_a_copy_still_shares_the_model_and_is_not_a_config():
    import copy

    model = AnthropicModel(api_key="k", base_url="http://127.0.0.1:9")
    assert type(copy.copy(model)) is AnthropicModel and copy.copy(model).requests is model.requests


def test_the_repr_never_shows_the_credential():
    assert "secret-key" not in repr(AnthropicConfig("secret-key", None, "http://x"))


def test_from_env_needs_a_key_in_the_env_itself():
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY"):
        AnthropicConfig.from_env({"PATH": "/usr/bin"})
    assert AnthropicConfig.from_env({"ANTHROPIC_AUTH_TOKEN": "t"}).auth_token == "t"


async def test_a_process_builds_one_model_per_config_and_it_reaches_the_server(fake_api):
    fake_api.replies.append({"text": "through the config"})
    config = AnthropicConfig("k", None, fake_api.url)
    model = AnthropicModel.of(config)
    assert (await model.create(REQUEST)).content[0].text == "through the config"
    assert AnthropicModel.of(AnthropicConfig("k", None, fake_api.url)) is model and model.config == config


def test_a_keyless_config_names_its_credential_and_the_holder_gives_it_back():
    from covey.model.anthropic_config import Credentials

    config = AnthropicConfig("secret-key", None, "http://127.0.0.1:1", fallback_model="claude-fallback-1")
    holder = Credentials()
    keyless = holder.remember(config)
    assert (keyless.api_key, keyless.auth_token, keyless.keyed) == (None, None, False)
    assert keyless.credential_id and b"secret-key" not in pickle.dumps(keyless)
    assert keyless.fallback_model == "claude-fallback-1" and keyless.base_url == config.base_url
    assert holder.keyed(keyless) == config
    token = AnthropicConfig(None, "secret-token", "http://127.0.0.1:1").keyless()
    assert token.credential_id != keyless.credential_id  # a key and a token are told apart
    assert holder.credential(token.credential_id) is None and holder.keyed(token) is None  # never given here
    assert "secret-key" not in repr(config) and repr(config)[:60] == repr(keyless)[:60]

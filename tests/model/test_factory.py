import pickle

import pytest

from covey.errors import UserError
from covey.gateway.anthropic import AnthropicModel
from covey.gateway.factory import make_model, model_id_for
from covey.model.base import ModelRequest
from covey.model.scripted import ScriptedModel
from tests.fake_messages_api import fake_api  # noqa: F401  (fixture)


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("ANTHROPIC_DEFAULT_OPUS_MODEL", raising=False)


def test_scripted_spec_loads_the_rule_file(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("rules:\n  - reply: {text: hi}\n")
    model = make_model(f"scripted:{path}")
    assert isinstance(model, ScriptedModel) and len(model.rules) == 1
    assert model_id_for(f"scripted:{path}") == "claude-sonnet-4-6"


@pytest.mark.parametrize("spec, model_id", [(None, "claude-sonnet-4-6"), ("anthropic", "claude-sonnet-4-6"),
                                            ("opus", "claude-opus-4-8"), ("my-local-model", "my-local-model")])
def test_alias_or_id_selects_anthropic(spec, model_id):
    assert isinstance(make_model(spec), AnthropicModel)
    assert model_id_for(spec) == model_id


def test_typo_fails_before_any_request():
    with pytest.raises(UserError, match="'opsu'"):
        make_model("opsu")


def test_missing_scripted_file_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="missing.yaml"):
        make_model(f"scripted:{tmp_path / 'missing.yaml'}")


# -- a run's own environment (SessionOptions.env) ---------------------------------------

RUN_ENV = {"ANTHROPIC_API_KEY": "client-key", "ANTHROPIC_BASE_URL": "http://client.example:8080"}


def test_an_env_gives_the_key_and_base_url_not_this_process(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://service.example:9")
    model = make_model("sonnet", env=RUN_ENV)
    assert model.client.api_key == "client-key"
    assert str(model.client.base_url).rstrip("/") == "http://client.example:8080"


def test_an_env_without_a_base_url_uses_the_public_api_not_this_process(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://service.example:9")
    model = make_model(None, env={"ANTHROPIC_API_KEY": "client-key"})
    assert str(model.client.base_url).rstrip("/") == "https://api.anthropic.com"


def test_an_env_may_carry_an_auth_token_and_a_copy_keeps_it(monkeypatch):
    model = make_model(None, env={"ANTHROPIC_AUTH_TOKEN": "client-token"})
    assert model.client.auth_token == "client-token" and model.client.api_key is None
    monkeypatch.delenv("ANTHROPIC_API_KEY")  # a Ray worker's environment has no key
    copy = AnthropicModel.of(pickle.loads(pickle.dumps(model)))
    assert copy.client.auth_token == "client-token" and copy.client.api_key is None


def test_an_env_without_a_key_is_a_user_error_naming_it_though_this_process_has_one():
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY"):
        make_model("sonnet", env={"PATH": "/usr/bin"})


def test_an_env_sets_the_aliases(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_DEFAULT_OPUS_MODEL", "service-opus")
    env = {**RUN_ENV, "ANTHROPIC_DEFAULT_OPUS_MODEL": "client-opus"}
    assert model_id_for("opus", env=env) == "client-opus"
    assert model_id_for("opus") == "service-opus"


async def test_a_model_built_from_an_env_reaches_its_server(fake_api):
    # os.environ points at a closed port (tests/conftest.py): only the env's URL answers.
    fake_api.replies.append({"text": "from the client's server"})
    model = make_model(None, env={"ANTHROPIC_API_KEY": "client-key", "ANTHROPIC_BASE_URL": fake_api.url})
    copy = AnthropicModel.of(pickle.loads(pickle.dumps(model)))  # what a process without Ray sends through
    request = ModelRequest(model="claude-test-1", messages=[{"role": "user", "content": "hi"}])
    assert (await copy.create(request)).content[0].text == "from the client's server"
    assert len(fake_api.requests) == 1

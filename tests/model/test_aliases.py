import pytest

from covey.errors import UserError
from covey.model.aliases import DEFAULT_MODEL, DEFAULT_SUBAGENT_MODEL, default_aliases, resolve_model


@pytest.fixture(autouse=True)
def _no_env_overrides(monkeypatch):
    for name in ("HAIKU", "SONNET", "OPUS"):
        monkeypatch.delenv(f"ANTHROPIC_DEFAULT_{name}_MODEL", raising=False)


@pytest.mark.parametrize(
    "alias, model_id",
    [("haiku", "claude-haiku-4-5"), ("sonnet", "claude-sonnet-4-6"), ("opus", "claude-opus-4-8"),
     ("fable", "claude-opus-4-8"), ("Sonnet", "claude-sonnet-4-6")],
)
def test_builtin_aliases(alias, model_id):
    assert resolve_model(alias) == model_id


def test_defaults_are_sonnet():
    assert DEFAULT_MODEL == DEFAULT_SUBAGENT_MODEL == "claude-sonnet-4-6"


def test_claude_code_env_vars_override_aliases(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_DEFAULT_OPUS_MODEL", "claude-opus-4-5")
    monkeypatch.setenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", "local-haiku")
    assert resolve_model("opus") == "claude-opus-4-5"
    assert resolve_model("fable") == "claude-opus-4-5"
    assert resolve_model("haiku") == "local-haiku"
    assert resolve_model("sonnet") == "claude-sonnet-4-6"


def test_passed_aliases_add_and_override(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_DEFAULT_SONNET_MODEL", "from-env")
    aliases = {"sonnet": "claude-sonnet-4-0", "fast": "my-fast-model"}
    assert resolve_model("sonnet", aliases) == "claude-sonnet-4-0"
    assert resolve_model("fast", aliases) == "my-fast-model"


@pytest.mark.parametrize(
    "model_id",
    ["claude-sonnet-4-5-20250929", "claude-x", "my-local-model", "org/model", "gpt-4.1", "llama3:8b"],
)
def test_model_ids_pass_through(model_id):
    assert resolve_model(model_id) == model_id


def test_unknown_bare_word_is_a_user_error_listing_aliases():
    with pytest.raises(UserError) as info:
        resolve_model("sonet")
    message = str(info.value)
    assert "'sonet'" in message
    for alias in ("haiku", "sonnet", "opus"):
        assert alias in message


def test_default_aliases_reads_env_at_call_time(monkeypatch):
    assert default_aliases()["opus"] == "claude-opus-4-8"
    monkeypatch.setenv("ANTHROPIC_DEFAULT_OPUS_MODEL", "later-opus")
    assert default_aliases()["opus"] == "later-opus"


def test_a_given_env_sets_the_overrides_instead_of_this_process(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", "service-haiku")
    env = {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "client-haiku"}
    assert default_aliases(env)["haiku"] == "client-haiku"
    assert resolve_model("haiku", env=env) == "client-haiku"
    assert resolve_model("haiku", env={}) == "claude-haiku-4-5"  # an env without it: the built-in id

import pytest

from covey.errors import UserError
from covey.model.anthropic import AnthropicModel
from covey.model.factory import make_model, model_id_for
from covey.model.scripted import ScriptedModel


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

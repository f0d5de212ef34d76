"""A Session's run takes its environment from ``env``, never from this process's (no Ray:
everything here is decided in ``Session.__init__`` and ``main_spec``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from covey.errors import UserError
from covey.model.scripted import ScriptedModel
from covey.runtime.ports import SessionRuntime
from covey.session import Session, main_agent

SERVICE_ENV = {  # what this process (the service) says, and the run must not see
    "COVEY_MAX_CONCURRENT_AGENTS": "50", "COVEY_POOL_SIZE": "9", "ANTHROPIC_DEFAULT_OPUS_MODEL": "service-opus",
}
SWITCHES = ("COVEY_ENABLE_TEAMS", "COVEY_SHARED_FS", "COVEY_DISABLE_BACKGROUND_TASKS")


@pytest.fixture(autouse=True)
def _service_env(monkeypatch):
    for name, value in SERVICE_ENV.items():
        monkeypatch.setenv(name, value)
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def client_home(tmp_path) -> Path:
    """A client's home with user settings, a user agent and a user skill."""
    home = tmp_path / "client-home"
    _write(home / ".claude/settings.json", json.dumps({"model": "opus", "permissions": {"allow": ["Bash(make)"]}}))
    _write(home / ".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews code.\n---\nYou review code.\n")
    _write(home / ".covey/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploys.\n---\nDeploy it.\n")
    return home


def _session(tmp_path, **options) -> Session:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    options.setdefault("model", ScriptedModel.from_dict({"rules": []}))
    return Session(cwd=str(project), **options)


def _client_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home), "PATH": "/client/bin", "COVEY_MAX_CONCURRENT_AGENTS": "3",
        "COVEY_ENABLE_TEAMS": "1", "COVEY_SHARED_FS": "1", "COVEY_DISABLE_BACKGROUND_TASKS": "1",
        "COVEY_POOL_SIZE": "2", "ANTHROPIC_DEFAULT_OPUS_MODEL": "client-opus",
    }


def test_limits_switches_and_pool_come_from_the_env(tmp_path, client_home):
    session = _session(tmp_path, env=_client_env(client_home))
    assert session.limits.max_concurrent == 3
    assert session.options.teams is True and session.options.shared_fs is True
    assert "TeamCreate" in session.tool_names() and main_agent.tool_options(session.config).background_disabled
    assert session.options.pool_size == 2


def test_user_settings_agents_and_skills_come_from_the_envs_home(tmp_path, client_home):
    session = _session(tmp_path, env=_client_env(client_home))
    assert any(str(client_home) in source for source in session.settings.sources)
    assert session.model_id == "client-opus"  # the user's settings say opus; the env's alias names it
    assert session.definitions["reviewer"].source == "user" and "deploy" in session.skills
    assert session.policy.where.home == client_home
    assert session.roots.root == client_home / ".claude"  # where Claude Code keeps the env's user's sessions
    assert session.roots.legacy == client_home / ".covey" / "transcripts"


def test_the_env_travels_in_the_main_spec(tmp_path, client_home):
    env = _client_env(client_home)
    session = _session(tmp_path, env=env)
    runtime = SessionRuntime(session_id=session.session_id, registry=None, mailbox=None)
    spec = session.main_spec("go", runtime)
    assert spec.settings.env == env and spec.settings.env is not env  # a copy: later changes stay out
    assert spec.transcript_dir == str(client_home / ".claude" / "projects" / str(session.cwd).replace("/", "-")
                                      .replace("_", "-"))


def test_the_envs_claude_config_dir_is_where_sessions_go(tmp_path, client_home):
    session = _session(tmp_path, env={**_client_env(client_home), "CLAUDE_CONFIG_DIR": str(tmp_path / "config")})
    assert session.roots.root == tmp_path / "config"
    assert session.transcript_folder.parent == tmp_path / "config" / "projects"


def test_explicit_options_win_over_the_env(tmp_path, client_home):
    session = _session(tmp_path, env=_client_env(client_home), teams=False, pool_size=0, transcript_dir="/t")
    assert session.options.teams is False and session.options.pool_size == 0 and session.options.transcript_dir == "/t"


def test_the_model_takes_the_envs_key_and_base_url(tmp_path):
    env = {"ANTHROPIC_API_KEY": "client-key", "ANTHROPIC_BASE_URL": "http://client.example:8080"}
    session = _session(tmp_path, env=env, model="sonnet")
    assert session.options.model.client.api_key == "client-key"
    assert str(session.options.model.client.base_url).rstrip("/") == "http://client.example:8080"


def test_an_env_without_a_key_fails_before_ray_though_this_process_has_one(tmp_path):
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY"):
        _session(tmp_path, env={"PATH": "/usr/bin"}, model="sonnet")


def test_without_an_env_the_session_reads_this_process(tmp_path, monkeypatch):
    monkeypatch.setenv("COVEY_ENABLE_TEAMS", "1")
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    session = _session(tmp_path, model_id="opus")
    assert session.env["COVEY_MAX_CONCURRENT_AGENTS"] == "50" and session.limits.max_concurrent == 50
    assert session.options.teams is True and session.options.shared_fs is False
    assert session.options.pool_size == 9 and session.model_id == "service-opus"
    assert session.options.transcript_dir is None and session.roots.root == Path("~/.claude")  # each node expands ~
    runtime = SessionRuntime(session_id=session.session_id, registry=None, mailbox=None)
    assert session.main_spec("go", runtime).settings.env is None


@pytest.mark.parametrize("env, disabled", [
    ({"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"}, True),
    ({"COVEY_DISABLE_BACKGROUND_TASKS": "0", "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"}, False),
    ({"COVEY_DISABLE_BACKGROUND_TASKS": "1", "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "0"}, True),
    ({}, False),
])
def test_claude_codes_background_switch_is_read_and_coveys_wins(tmp_path, client_home, env, disabled):
    session = _session(tmp_path, env={"HOME": str(client_home), **env})
    assert main_agent.tool_options(session.config).background_disabled is disabled

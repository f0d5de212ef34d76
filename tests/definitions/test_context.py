import git
import pytest

from covey.definitions.builtin import BUILTIN_AGENTS
from covey.definitions.context import _text, agent_list_message, project_context
from covey.definitions.definition import AgentDefinition


def texts(messages):
    return [block["text"] for message in messages for block in message["content"]]


@pytest.fixture
def repo(tmp_path):
    repository = git.Repo.init(tmp_path, initial_branch="main")
    with repository.config_writer() as config:
        config.set_value("user", "name", "Test").set_value("user", "email", "t@example.com")
    (tmp_path / "CLAUDE.md").write_text("Always run the tests.\n")
    repository.index.add(["CLAUDE.md"])
    repository.index.commit("first commit")
    (tmp_path / "dirty.txt").write_text("x")
    return tmp_path


def test_instructions_and_git_snapshot(repo):
    (repo / ".claude").mkdir()
    (repo / ".claude/CLAUDE.md").write_text("Nested rules.")
    (repo / "AGENTS.md").write_text("Agents rules.")
    messages = project_context(repo, omit=False)
    assert len(messages) == 1 and messages[0]["role"] == "user"
    instructions, status = texts(messages)
    assert instructions.startswith("<system-reminder>") and "project's instructions" in instructions
    for text in ("Always run the tests.", "Nested rules.", "Agents rules."):
        assert text in instructions
    assert "Current branch: main" in status and "?? dirty.txt" in status and "first commit" in status


def test_omit_drops_everything_unless_kill_switch(repo, monkeypatch):
    monkeypatch.delenv("COVEY_DISABLE_OMIT_CLAUDE_MD", raising=False)
    assert project_context(repo, omit=True) == []
    monkeypatch.setenv("COVEY_DISABLE_OMIT_CLAUDE_MD", "1")
    assert len(texts(project_context(repo, omit=True))) == 2


def test_non_git_dir_has_no_snapshot(tmp_path):
    assert project_context(tmp_path, omit=False) == []
    (tmp_path / "COVEY.md").write_text("covey rules")
    (only,) = texts(project_context(tmp_path, omit=False))
    assert "covey rules" in only and "Git status" not in only


def test_empty_repository_and_broken_git_never_raise(tmp_path):
    git.Repo.init(tmp_path)
    (status,) = texts(project_context(tmp_path, omit=False))
    assert "Recent commits:\n(none)" in status
    (tmp_path / ".git" / "HEAD").write_text("garbage")
    assert isinstance(project_context(tmp_path, omit=False), list)


def test_agent_list_message():
    extra = AgentDefinition(name="reviewer", description="Reviews", tools=["Read", "Grep"], source="project")
    message = agent_list_message({**BUILTIN_AGENTS, "reviewer": extra})
    (text,) = texts([message])
    assert message["role"] == "user" and text.startswith("<system-reminder>")
    assert "- reviewer: Reviews (Tools: Read, Grep)" in text
    assert "- Explore:" in text and "All tools except Edit, Write, NotebookEdit, Agent" in text


async def test_the_session_snapshot_is_taken_once_and_reused_by_children_in_its_directory(repo, monkeypatch):
    """Like Claude Code's session-start git status: children in the session's cwd run no git at all."""
    from covey.definitions import context
    from covey.runtime.ports import SessionRuntime

    monkeypatch.delenv("COVEY_DISABLE_OMIT_CLAUDE_MD", raising=False)
    runtime = SessionRuntime(session_id="s", registry=None, mailbox=None,
                             project_context={str(repo): project_context(repo, omit=False)})
    (repo / "later.txt").write_text("made after the session started")
    calls = []
    monkeypatch.setattr(context, "project_context", lambda cwd, omit, **_: calls.append(cwd) or [])
    snapshot = texts(await runtime.context_for(str(repo), omit=False))
    assert "?? dirty.txt" in snapshot[1] and "later.txt" not in snapshot[1] and calls == []
    assert await runtime.context_for(str(repo), omit=True) == []  # omitClaudeMd still applies
    other = repo / "sub"
    other.mkdir()
    await runtime.context_for(str(other), omit=False)  # another directory: looked at afresh
    assert calls == [str(other)]


def test_the_kill_switch_is_read_from_the_runs_env_when_given(repo, monkeypatch):
    monkeypatch.delenv("COVEY_DISABLE_OMIT_CLAUDE_MD", raising=False)
    assert len(texts(project_context(repo, omit=True, env={"COVEY_DISABLE_OMIT_CLAUDE_MD": "1"}))) == 2
    monkeypatch.setenv("COVEY_DISABLE_OMIT_CLAUDE_MD", "1")
    assert project_context(repo, omit=True, env={}) == []  # this process's switch is not the run's


def test_a_commit_summary_git_hands_over_as_bytes_is_shown_as_text():
    assert _text(b"caf\xc3\xa9 \xff") == "café \ufffd" and _text("plain") == "plain"

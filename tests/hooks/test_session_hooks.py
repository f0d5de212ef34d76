"""A Session's hooks (no Ray): SessionEnd when it closes, SessionStart's source and the transcript path it hands its agents."""

import json
from dataclasses import replace
from types import SimpleNamespace

from covey.session import Session, main_agent


def _session(tmp_path, hooks=None, **options) -> Session:
    if hooks is not None:
        (tmp_path / ".claude").mkdir(exist_ok=True)
        (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - reply: {text: done}\n")
    return Session(cwd=str(tmp_path), model=f"scripted:{rules}", transcript_dir=str(tmp_path / "t"), **options)


def _end_hook(out) -> dict:
    return {"SessionEnd": [{"matcher": "other", "hooks": [{"type": "command", "command": f"cat >> {out}"}]}]}


def test_session_end_fires_once_when_a_session_that_ran_closes(tmp_path):
    out = tmp_path / "end.jsonl"
    session = _session(tmp_path, _end_hook(out))
    session.slot.turns = 1  # a turn ran (driving one needs Ray; the CLI test does)
    session.close()
    session.close()
    (line,) = out.read_text().splitlines()
    payload = json.loads(line)
    assert payload["hook_event_name"] == "SessionEnd" and payload["reason"] == "other"
    assert payload["session_id"] == session.session_id and payload["cwd"] == str(tmp_path)
    assert payload["transcript_path"] == str(session.transcript_folder / f"{session.session_id}.jsonl")  # Claude Code's


def test_a_session_that_never_ran_ends_without_session_end(tmp_path):
    out = tmp_path / "end.jsonl"
    _session(tmp_path, _end_hook(out)).close()
    assert not out.exists()


def test_a_session_end_reason_is_matched(tmp_path):
    out = tmp_path / "end.jsonl"
    session = _session(tmp_path, _end_hook(out))
    session.slot.turns = 1
    session.close(reason="logout")  # the matcher wants "other"
    assert not out.exists()


def test_the_main_spec_says_how_the_session_started_and_names_its_transcript(tmp_path):
    session = _session(tmp_path)
    runtime = SimpleNamespace(project_context={str(tmp_path): []})
    fresh = session.main_spec("hi", runtime)
    assert fresh.session_source is None and fresh.history is None  # run_agent fires SessionStart as "startup"
    assert fresh.settings.session_transcript == str(session.transcript_folder / f"{session.session_id}.jsonl")
    resumed = replace(session.config, resumed=SimpleNamespace(history=[{"role": "user", "content": "before"}]))
    assert _spec(session, resumed, "again", runtime).session_source == "resume"
    forked = replace(resumed, options=session.options.model_copy(update={"fork_session": True}))
    assert _spec(session, forked, "again", runtime).session_source == "fork"
    session.slot.turns = 1  # a later turn of the conversation: no SessionStart
    assert session.main_spec("more", runtime).session_source is None


def _spec(session, config, prompt, runtime):
    """The main spec of ``session`` had it loaded ``config``."""
    return main_agent.main_spec(config, session.slot, prompt, runtime, session_id=session.session_id, model=None)

"""``covey trace SESSION_ID [-o FILE] [--open]``: a session's timeline as one HTML file (issue 43). No Ray."""

from __future__ import annotations

import sys
import webbrowser

import pytest

from covey.cli.main import main
from tests.observe.timeline_files import write_session

pytest.importorskip("matplotlib")


@pytest.fixture
def session(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "proj").mkdir()
    return write_session(tmp_path / "config", tmp_path / "proj")


def test_it_writes_the_page_where_asked_and_says_where(session, tmp_path, capsys):
    out = tmp_path / "out" / "run.html"
    assert main(["trace", session, "-o", str(out)]) == 0
    printed = capsys.readouterr()
    assert printed.out.strip() == str(out.resolve()) and printed.err == ""
    html = out.read_text()
    assert f"covey session {session}" in html and "general-purpose:a" in html and "<svg" in html


def test_by_default_it_writes_beside_you_and_opens_it_when_asked(session, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    assert main(["trace", session[:8], "--open"]) == 0
    path = tmp_path / f"covey-trace-{session[:8]}.html"
    assert path.exists() and opened == [path.as_uri()]


@pytest.mark.parametrize("given, said", [
    ("nope", "covey: Invalid session ID 'nope': give its id, or the first 8 characters of it or more."),
    ("0123abcd", "covey: Session id '0123abcd' matches no session under"),
    ("00000000-0000-0000-0000-000000000000", "covey: No session '00000000-0000-0000-0000-000000000000' found"),
])
def test_a_bad_or_unknown_id_is_one_line_and_exit_1(session, given, said, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["trace", given]) == 1
    printed = capsys.readouterr()
    assert printed.out == "" and printed.err.startswith(said) and printed.err.count("\n") == 1


def test_a_bad_file_of_the_session_is_one_line_and_the_page_is_still_written(session, tmp_path, capsys):
    meta = next((tmp_path / "config" / "projects").glob(f"*/{session}/subagents/agent-b.meta.json"))
    meta.write_text("[1, 2]")
    assert main(["trace", session, "-o", str(tmp_path / "t.html")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("covey: ") and "agent-b.meta.json" in err[0]
    assert "agent-b.meta.json" in (tmp_path / "t.html").read_text()


def test_without_matplotlib_it_is_one_line_saying_how_to_get_it(session, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert main(["trace", session, "-o", str(tmp_path / "t.html")]) == 1
    assert capsys.readouterr().err == ("covey: the timeline picture needs matplotlib, which is not installed: "
                                       "pip install 'covey[notebook]'\n")
    assert not (tmp_path / "t.html").exists()

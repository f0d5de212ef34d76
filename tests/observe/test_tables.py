"""covey's command tables: plain and stable off a terminal, coloured and fitted on one."""

from __future__ import annotations

import re

from covey.observe import tables
from covey.observe.live import STATUS_STYLES
from covey.observe.tables import table_lines

ROWS = [["agent-1", "main", "running", "the main agent", ""],
        ["agent-22", "general-purpose", "queued", "look [here] :smile:", "(waits: the concurrency limit)"]]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_off_a_terminal_the_columns_line_up_plain_with_nothing_trailing():
    lines = table_lines(ROWS, ("bold", "", STATUS_STYLES), terminal=False)
    assert lines == ["  agent-1   main             running  the main agent",
                     "  agent-22  general-purpose  queued   look [here] :smile:  (waits: the concurrency limit)"]
    assert [line.split()[2] for line in lines] == ["running", "queued"]  # as scripts read them


def test_a_long_row_is_never_wrapped_off_a_terminal():
    long = "word " * 400
    (line,) = table_lines([["a", long.strip()]], terminal=False)
    assert line == "  a  " + long.strip()


def test_on_a_terminal_a_status_is_coloured_and_the_rows_fit_its_width(monkeypatch):
    monkeypatch.setattr(tables.shutil, "get_terminal_size", lambda: __import__("os").terminal_size((60, 24)))
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    lines = table_lines(ROWS, ("bold", "", STATUS_STYLES), whole=3, terminal=True)
    assert any("\x1b[" in line for line in lines)
    plain = [ANSI.sub("", line).rstrip() for line in lines]
    assert all(len(line) <= 60 for line in plain), plain
    assert plain[0].startswith("  agent-1 ") and plain[0].split()[2] == "running"  # short columns stay whole
    assert any(line.startswith("  agent-22  general-purpose  queued ") for line in plain)
    assert len(plain) > 2 and "concurrency" in "".join(plain)  # the others wrap


def test_no_rows_draw_nothing():
    assert table_lines([], terminal=False) == []


def test_rich_is_not_imported_until_a_table_is_drawn():
    """``covey -p`` starts without it; the commands that draw import it."""
    import subprocess
    import sys

    code = ("import sys, covey.cli, covey.cli.served, covey.cli.sessions, covey.cli.agents, "
            "covey.observe.tables; print('rich' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


TREE = {"agent_id": "agent-1", "type": "main", "status": "running", "turns": 2, "subtree_tokens": 1500,
        "subtree_cost_usd": 0.01, "children": [
            {"agent_id": "agent-2", "type": "Explore", "status": "completed", "turns": 1, "subtree_tokens": 10,
             "subtree_cost_usd": 0.0, "children": []}]}


class _Registry:
    async def tree(self):
        return TREE


async def test_covey_tree_draws_the_live_views_table_on_a_terminal_and_plain_lines_elsewhere(monkeypatch):
    from covey.cli import inspect

    monkeypatch.setattr(tables.shutil, "get_terminal_size", lambda: __import__("os").terminal_size((100, 24)))
    monkeypatch.setattr(inspect, "on_terminal", lambda: True)
    drawn = ANSI.sub("", await inspect.tree_text("abcd1234", _Registry()))
    assert "└── Explore agent-2" in drawn and "completed" in drawn
    monkeypatch.setattr(inspect, "on_terminal", lambda: False)
    assert (await inspect.tree_text("abcd1234", _Registry())).splitlines()[1].startswith("  └ Explore agent-2  completed")

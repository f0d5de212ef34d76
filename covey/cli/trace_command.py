"""``covey trace SESSION_ID [-o FILE] [--open]``: a session's timeline as one HTML file that opens offline.

The session is found by its id (or the unique start of it) where ``--resume`` finds it, in this
user's sessions (``CLAUDE_CONFIG_DIR``, else ``~/.claude``); it may be finished or still running
(its transcripts are read as they are now). Needs matplotlib (``covey[notebook]``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_trace_command(sub: Any) -> None:
    trace = sub.add_parser("trace", help="write a session's timeline (who ran when, model and tool time, cost "
                                         "by agent) as one HTML file that opens offline")
    trace.add_argument("session_id", help="the session's id, or its first 8 characters or more")
    trace.add_argument("-o", "--output", metavar="FILE", help="where to write it (default: covey-trace-<id>.html here)")
    trace.add_argument("--open", action="store_true", help="then open it in the web browser")
    trace.set_defaults(handler=trace_command)


def trace_command(args: argparse.Namespace) -> int:
    import webbrowser

    from covey.observe.session_runs import find_session, runs_on_disk
    from covey.observe.timeline import timeline_of
    from covey.observe.timeline_draw import require_matplotlib
    from covey.observe.timeline_page import write_page

    require_matplotlib()  # before any reading: a missing extra is one line
    session_id = find_session(args.session_id)
    runs, problems = runs_on_disk(session_id)
    timeline = timeline_of(runs, title=f"covey session {session_id}", problems=problems)
    path = write_page(args.output or f"covey-trace-{session_id[:8]}.html", timeline).resolve()
    for line in problems:
        print(f"covey: {line}", file=sys.stderr)
    print(path)
    if args.open and not webbrowser.open(Path(path).as_uri()):
        print(f"covey: no web browser could be opened; open {path.as_uri()}", file=sys.stderr)
    return 0

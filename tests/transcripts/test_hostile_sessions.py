"""Issue 39 item 6 for resume and continue: a hostile ``session.json`` (a FIFO, /dev/zero, 200 MB,
not JSON, wrong types) is one line naming it for ``--resume``, and ``--continue`` passes over it
to the other sessions of the directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from covey.transcripts.resume import RECORD_NAME, ResumeError, find_resume, record_path
from tests.transcripts.test_resume import _session, project, tdir  # noqa: F401 - fixtures
from tests.hostile_files import huge



HOSTILE = {
    "fifo": (os.mkfifo, "FIFO"),
    "symlink-dev-zero": (lambda p: p.symlink_to("/dev/zero"), "character device"),
    "huge-200mb": (huge, "too large"),
    "not-json": (lambda p: p.write_text("{"), "invalid field"),
    "deep": (lambda p: p.write_text("[" * 100_000), "invalid field"),
    "wrong-types": (lambda p: p.write_text('{"session_id": 5, "cwd": []}'), "invalid field"),
}


def _spoil(tdir: Path, session_id: str, name: str) -> Path:
    path = record_path(tdir, session_id)
    assert path.name == RECORD_NAME
    path.unlink()
    HOSTILE[name][0](path)
    return path


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_session_record_is_one_line_for_resume_and_passed_over_by_continue(tdir, project, name):
    good = _session(tdir, project, now_s=100.0)
    bad = _session(tdir, project, now_s=200.0)
    path = _spoil(tdir, bad.session_id, name)
    with pytest.raises(ResumeError) as caught:
        find_resume(tdir, session_id=bad.session_id)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and HOSTILE[name][1] in message, message
    assert find_resume(tdir, continue_in=project).record.session_id == good.session_id

"""``covey logs -f``: the follower prints what is appended to the file, through a turn-over and a
cut; it stops when told. Each test gives it up to 10 s to show a line."""

from __future__ import annotations

import io
import os
import threading
import time
from pathlib import Path

import pytest

from covey.observe import follow
from covey.observe.follow import print_file


class _Out(io.StringIO):
    """What the follower printed, readable from the test's thread."""

    def wait_for(self, text: str, timeout_s: float = 10.0) -> str:
        deadline = time.monotonic() + timeout_s
        while text not in (seen := self.getvalue()):
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} was not printed; printed: {seen!r}")
            time.sleep(0.02)
        return seen


@pytest.fixture
def following(tmp_path):
    """A follower of ``transcript.jsonl`` in a thread, stopped (and joined) when the test ends."""
    path = tmp_path / "transcript.jsonl"
    path.write_text('{"n": 1}\n')
    out, stop = _Out(), threading.Event()
    thread = threading.Thread(target=print_file, args=(path, True, out, stop), daemon=True)
    thread.start()
    out.wait_for('{"n": 1}\n')
    yield path, out
    stop.set()
    thread.join(timeout=10)
    assert not thread.is_alive(), "the follower did not stop"


def _append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)


def test_without_follow_it_prints_the_file_and_returns(tmp_path):
    path = tmp_path / "transcript.jsonl"
    path.write_text("one\ntwo\n")
    out = io.StringIO()
    print_file(path, False, out)
    assert out.getvalue() == "one\ntwo\n"


def test_appended_lines_are_printed_in_order(following):
    path, out = following
    _append(path, '{"n": 2}\n')
    out.wait_for('{"n": 2}\n')
    _append(path, '{"n": 3}\n{"n": 4}\n')
    assert out.wait_for('{"n": 4}\n') == '{"n": 1}\n{"n": 2}\n{"n": 3}\n{"n": 4}\n'


def test_appended_lines_wake_it_without_waiting_for_its_quiet_look(tmp_path, monkeypatch):
    """A file event wakes the follower: its once-a-minute look is not what shows the line."""
    monkeypatch.setattr(follow, "QUIET_WAKE_MS", 60_000)
    path = tmp_path / "transcript.jsonl"
    path.write_text("first\n")
    out, stop = _Out(), threading.Event()
    thread = threading.Thread(target=print_file, args=(path, True, out, stop), daemon=True)
    thread.start()
    try:
        out.wait_for("first\n")
        time.sleep(0.5)  # the watch has started
        _append(path, "second\n")
        out.wait_for("second\n", timeout_s=15.0)  # well under the minute
    finally:
        stop.set()
        thread.join(timeout=70)


def test_a_file_turned_over_is_finished_then_the_new_one_is_followed(following):
    path, out = following
    _append(path, "last of the old\n")
    out.wait_for("last of the old\n")
    path.rename(path.with_name("transcript.jsonl.1"))
    path.write_text("first of the new\n")
    _append(path, "second of the new\n")
    assert out.wait_for("second of the new\n").endswith("last of the old\nfirst of the new\nsecond of the new\n")


def test_a_file_cut_short_is_read_again_from_its_start(following):
    path, out = following
    _append(path, "a long line that the cut removes\n")
    out.wait_for("the cut removes\n")
    with open(path, "w", encoding="utf-8") as handle:  # truncated, then written anew
        handle.write("after the cut\n")
    assert out.wait_for("after the cut\n").endswith("the cut removes\nafter the cut\n")


def test_a_line_written_in_two_parts_is_printed_whole(following):
    path, out = following
    _append(path, '{"half": ')
    out.wait_for('{"half": ')
    _append(path, '"done"}\n')
    assert out.wait_for('"done"}\n').endswith('{"half": "done"}\n')
    assert os.path.getsize(path) == len('{"n": 1}\n{"half": "done"}\n')

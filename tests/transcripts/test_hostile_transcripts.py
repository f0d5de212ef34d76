"""Issue 39 item 6: a transcript (.jsonl) read by resume, continue and attach skips every line that
is no record (torn, not JSON, an array, not UTF-8, too deep, a gigabyte long) and reads the rest;
a FIFO or device is refused unopened."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

import covey.transcripts.transcript_read as transcript_read
from covey.common.bounded import NotRegularFile
from covey.transcripts.transcript import last_uuid, read_transcript, rebuild_history

FIRST = {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hello"}}
LAST = {"type": "assistant", "uuid": "u2", "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}}

JUNK = {
    "not-json": b"this is not json\n",
    "json-array": b'[{"uuid": "x"}]\n',
    "json-number": b"42\n",
    "json-string": b'"a record?"\n',
    "json-null": b"null\n",
    "empty-line": b"\n",
    "nul-bytes": b'{"uuid": "x\x00"}\n',
    "invalid-utf8": b'{"uuid": "\xff\xfe"}\n',
    "deep-arrays": b'{"uuid": "x", "m": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
    "deep-objects": b'{"uuid": "x", "m": ' + b'{"a": ' * 300 + b"1" + b"}" * 300 + b"}\n",
    "content-mapping": b'{"uuid": "x", "message": {"role": "user", "content": {"a": 1}}}\n',
    "content-junk-blocks": b'{"uuid": "x", "message": {"role": "user", "content": [1, "s", null]}}\n',
    "message-list": b'{"uuid": "x", "message": ["user"]}\n',
}


def _write(path: Path, middle: bytes, *, tail: bytes = b"") -> Path:
    path.write_bytes(json.dumps(FIRST).encode() + b"\n" + middle + json.dumps(LAST).encode() + b"\n" + tail)
    return path


def _history_is_intact(path: Path) -> None:
    history = rebuild_history(path)
    assert [m["role"] for m in history] == ["user", "assistant"] and history[0]["content"][0]["text"] == "hello"


@pytest.mark.parametrize("name", sorted(JUNK))
def test_a_junk_line_is_skipped_and_the_records_around_it_are_read(tmp_path, name):
    path = _write(tmp_path / "t.jsonl", JUNK[name])
    uuids = [record.get("uuid") for record in read_transcript(path)]
    assert uuids[0] == "u1" and uuids[-1] == "u2"
    _history_is_intact(path)


@pytest.mark.parametrize("tail", [b'{"uuid": "torn", "message": {"role": "us', b"[1, 2", b"\xff"],
                         ids=["torn-record", "torn-array", "torn-utf8"])
def test_a_truncated_last_line_is_skipped(tmp_path, tail):
    path = _write(tmp_path / "t.jsonl", b"", tail=tail)
    assert last_uuid(path) == "u2"
    _history_is_intact(path)


def test_a_line_over_the_cap_is_skipped_in_chunks_never_held_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(transcript_read, "MAX_RECORD_BYTES", 1000)
    long_line = json.dumps({"uuid": "long", "message": {"role": "user", "content": "x" * 50_000}}).encode() + b"\n"
    path = _write(tmp_path / "t.jsonl", long_line)
    assert [record["uuid"] for record in read_transcript(path)] == ["u1", "u2"]


def test_a_gigabyte_line_is_skipped_without_reading_it_into_memory(tmp_path):
    path = tmp_path / "t.jsonl"
    with open(path, "wb") as handle:  # sparse: a 1 GiB line of NULs between two records
        handle.write(json.dumps(FIRST).encode() + b"\n")
        handle.seek(1024 ** 3, os.SEEK_CUR)
        handle.write(b"\n" + json.dumps(LAST).encode() + b"\n")
    started = time.monotonic()
    assert [record["uuid"] for record in read_transcript(path)] == ["u1", "u2"]
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("make", [os.mkfifo, lambda path: path.symlink_to("/dev/zero"), lambda path: path.mkdir()],
                         ids=["fifo", "dev-zero", "directory"])
def test_a_transcript_that_is_no_regular_file_is_refused_unopened(tmp_path, make):
    path = tmp_path / "t.jsonl"
    make(path)
    with pytest.raises(NotRegularFile, match="not a regular file"):
        list(read_transcript(path))

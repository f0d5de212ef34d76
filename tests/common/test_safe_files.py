"""covey/common/safe_files.py: a file from a project or home folder read bounded, and why a bad one
failed in one line."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from covey.common.bounded import NotRegularFile
from covey.common.safe_files import MAX_JSON_NESTING, FileTooLarge, TooDeep, load_json, read_bytes, read_json, reason


def test_a_file_of_exactly_the_cap_is_read_and_one_byte_more_is_refused(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_bytes(path, 100) == b"x" * 100
    with pytest.raises(FileTooLarge, match=r"too large: over 99 bytes .* the most a thing may be; not read"):
        read_bytes(path, 99, what="a thing")


def test_nesting_up_to_the_bound_loads_and_past_it_is_refused():
    assert load_json("[" * MAX_JSON_NESTING + "]" * MAX_JSON_NESTING) is not None
    with pytest.raises(TooDeep, match=f"more than {MAX_JSON_NESTING} levels"):
        load_json("[" * (MAX_JSON_NESTING + 1) + "]" * (MAX_JSON_NESTING + 1))
    with pytest.raises(TooDeep):
        load_json(b"[" * 1_000_000 + b"]" * 1_000_000)  # past the interpreter's recursion limit too


def test_a_fifo_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotRegularFile) as caught:
        read_json(tmp_path / "pipe")
    assert reason(caught.value) == "a FIFO (named pipe), not a regular file"


def _raised(action) -> BaseException:
    try:
        action()
    except BaseException as exc:  # noqa: BLE001 - the test inspects whatever is raised
        return exc
    raise AssertionError("nothing raised")


@pytest.mark.parametrize(("action", "expected"), [
    (lambda: b"ab\xff".decode("utf-8"), "not UTF-8 text (byte 0xff at offset 2)"),
    (lambda: json.loads('{"a": }'), "not valid JSON: Expecting value at line 1, column 7"),
    (lambda: open("/nonexistent/x"), "No such file or directory"),
    (lambda: yaml.safe_load("a: [b\nc: d"), "while parsing a flow sequence"),
    (lambda: yaml.safe_load("a: \x00"), "#x0000"),
], ids=["utf8", "json", "missing", "yaml-marked", "yaml-reader"])
def test_the_reason_is_one_line_without_the_path(action, expected):
    text = reason(_raised(action))
    assert expected in text and "\n" not in text and "/nonexistent" not in text

"""FIFOs, devices and huge files: Read, Grep and Glob answer at once, and what they return is bounded."""

import asyncio
import os
import threading

import pytest

from covey.tools.base import MAX_RESULT_CHARS
from covey.tools.glob import Glob, GlobInput
from covey.tools.grep import Grep, GrepInput
from covey.tools.read import Read, ReadInput


def _in_time(coro, seconds: float = 10):
    """Run ``coro`` in its own thread and loop: a regression that blocks fails here instead of hanging
    the suite (the blocked thread is a daemon, left behind)."""
    box: dict = {}

    def run() -> None:
        box["result"] = asyncio.run(coro)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds} s"
    return box["result"]


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.txt"
    os.mkfifo(path)
    return path


def test_read_of_a_fifo_is_an_error_at_once(ctx, fifo):
    result = _in_time(Read().run(ReadInput(file_path=str(fifo)), ctx))
    assert result.is_error and "FIFO" in result.content and "regular files only" in result.content
    assert "timeout" in result.content  # what to do instead


def test_read_of_a_fifo_named_like_an_image_is_an_error_at_once(ctx, tmp_path):
    os.mkfifo(tmp_path / "p.png")
    result = _in_time(Read().run(ReadInput(file_path=str(tmp_path / "p.png")), ctx))
    assert result.is_error and "FIFO" in result.content


def test_read_of_a_character_device_is_an_error(ctx):
    result = _in_time(Read().run(ReadInput(file_path="/dev/zero", limit=5), ctx))
    assert result.is_error and "character device" in result.content


@pytest.mark.parametrize("ripgrep", [False])  # rg walks past FIFOs itself; the Python backend must too
def test_grep_over_a_folder_holding_a_fifo_skips_it(ctx, tmp_path, fifo, ripgrep):
    (tmp_path / "a.txt").write_text("needle\n")
    result = _in_time(Grep(use_ripgrep=ripgrep).run(GrepInput(pattern="needle"), ctx))
    assert not result.is_error and "a.txt" in result.content and "pipe" not in result.content


def test_grep_of_a_fifo_path_is_an_error(ctx, fifo):
    result = _in_time(Grep(use_ripgrep=False).run(GrepInput(pattern="x", path=str(fifo)), ctx))
    assert result.is_error and "FIFO" in result.content


def test_glob_lists_no_fifo(ctx, tmp_path, fifo):
    (tmp_path / "a.txt").write_text("a")
    result = _in_time(Glob().run(GlobInput(pattern="*.txt"), ctx))
    assert result.content == str(tmp_path / "a.txt")


def test_one_read_is_capped_in_characters_with_a_way_on(ctx, tmp_path):
    (tmp_path / "wide.txt").write_text(("w" * 1999 + "\n") * 1000)  # 2 MB within 1000 lines
    result = _in_time(Read().run(ReadInput(file_path="wide.txt", limit=1000), ctx))
    assert not result.is_error and len(result.content) <= MAX_RESULT_CHARS + 200
    last = result.content.splitlines()[-1]
    assert "cap of one Read" in last and "of 1000" in last and "use offset=" in last


def test_a_huge_single_line_is_counted_not_held(ctx, tmp_path):
    (tmp_path / "min.js").write_text("m" * 5_000_000 + "\nend\n")
    result = _in_time(Read().run(ReadInput(file_path="min.js", allow_large=True), ctx))
    first, second = result.content.splitlines()
    assert first.endswith(f"... [{5_000_000 - 2000} characters cut]") and second == "     2\tend"


def test_an_image_over_the_limit_is_refused_without_reading_it_whole(ctx, tmp_path):
    from covey.tools.read_media import MAX_IMAGE_BYTES

    big = tmp_path / "big.png"
    with open(big, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.truncate(MAX_IMAGE_BYTES * 4)  # sparse: costs no disk
    result = _in_time(Read().run(ReadInput(file_path=str(big)), ctx))
    assert result.is_error and f"is {MAX_IMAGE_BYTES * 4 // 1024} KiB" in result.content

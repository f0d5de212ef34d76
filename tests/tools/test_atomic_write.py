"""Edit, Write and NotebookEdit replace a file atomically (covey/common/atomic.py): a write that
fails midway leaves the original whole, the original's mode is kept, a symlink is written
through, a hard-linked file is written in place."""

from __future__ import annotations

import json
import os
import stat

import pytest

from covey.common import atomic
from covey.tools.edit import Edit, EditInput
from covey.tools.notebook_edit import NotebookEdit, NotebookEditInput
from covey.tools.read import Read, ReadInput
from covey.tools.write import Write, WriteInput

ORIGINAL = "".join(f"line {n:05d} of the original file\n" for n in range(600))  # > 16 KB, as in the issue


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def disk_fills_after_4096_bytes(monkeypatch):
    """``os.write`` writes 4096 bytes, then fails as a full disk does."""
    real_write, written = os.write, [0]

    def write(descriptor, data):
        if written[0] >= 4096:
            raise OSError(28, "No space left on device")
        count = real_write(descriptor, bytes(data[: 4096 - written[0]]))
        written[0] += count
        return count

    monkeypatch.setattr(os, "write", write)


def leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_write_that_fails_midway_leaves_the_original_whole(tmp_path, disk_fills_after_4096_bytes):
    path = tmp_path / "big.txt"
    path.write_text(ORIGINAL)
    with pytest.raises(OSError, match="No space left") as caught:
        atomic.write_text(path, ORIGINAL.upper())
    assert path.read_text() == ORIGINAL and leftovers(tmp_path) == []
    assert atomic.failure(path, caught.value).endswith("Nothing was changed.")


def test_the_new_text_replaces_the_old_and_the_mode_is_kept(tmp_path):
    path = tmp_path / "script.sh"
    path.write_text("old\n")
    os.chmod(path, 0o750)
    atomic.write_text(path, "new\r\nline\n")
    assert path.read_bytes() == b"new\r\nline\n" and mode(path) == 0o750 and leftovers(tmp_path) == []


def test_a_new_file_gets_the_umask_mode(tmp_path):
    previous = os.umask(0o027)
    try:
        atomic.write_text(tmp_path / "new.txt", "x")
    finally:
        os.umask(previous)
    assert mode(tmp_path / "new.txt") == 0o640


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old")
    os.chmod(target, 0o600)
    (tmp_path / "link.txt").symlink_to(target)
    assert atomic.write_text(tmp_path / "link.txt", "new") == target
    assert (tmp_path / "link.txt").is_symlink() and target.read_text() == "new" and mode(target) == 0o600


def test_a_hard_linked_file_is_written_in_place_so_every_name_sees_the_text(tmp_path):
    (tmp_path / "a").write_text("old")
    os.link(tmp_path / "a", tmp_path / "b")
    atomic.write_text(tmp_path / "a", "new")
    assert (tmp_path / "b").read_text() == "new"


def test_a_failed_write_in_place_says_the_file_may_be_cut_short(tmp_path, disk_fills_after_4096_bytes):
    (tmp_path / "a").write_text(ORIGINAL)
    os.link(tmp_path / "a", tmp_path / "b")
    with pytest.raises(atomic.PartialWrite) as caught:
        atomic.write_text(tmp_path / "a", ORIGINAL.upper())
    assert "may now be cut short" in atomic.failure(tmp_path / "a", caught.value)


async def read(ctx, path):
    assert not (await Read().run(ReadInput(file_path=str(path)), ctx)).is_error


async def test_edit_that_cannot_write_reports_it_and_loses_nothing(ctx, tmp_path, disk_fills_after_4096_bytes):
    path = tmp_path / "big.txt"
    path.write_text(ORIGINAL)
    await read(ctx, path)
    result = await Edit().run(EditInput(file_path=str(path), old_string="line 00001", new_string="LINE 1"), ctx)
    assert result.is_error and "No space left on device" in result.content and "Nothing was changed" in result.content
    assert path.read_text() == ORIGINAL and leftovers(tmp_path) == []


async def test_write_and_notebook_edit_lose_nothing_either(ctx, tmp_path, disk_fills_after_4096_bytes):
    text = tmp_path / "t.txt"
    text.write_text(ORIGINAL)
    notebook = tmp_path / "n.ipynb"
    cells = [{"cell_type": "markdown", "id": "a", "metadata": {}, "source": ORIGINAL}]
    notebook.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    before = notebook.read_text()
    await read(ctx, text)
    await read(ctx, notebook)
    written = await Write().run(WriteInput(file_path=str(text), content=ORIGINAL * 2), ctx)
    edited = await NotebookEdit().run(NotebookEditInput(notebook_path=str(notebook), cell_id="a",
                                                        new_source=ORIGINAL * 2), ctx)
    assert written.is_error and edited.is_error
    assert text.read_text() == ORIGINAL and notebook.read_text() == before and leftovers(tmp_path) == []


async def test_edit_keeps_the_mode_and_writes_through_a_symlink(ctx, tmp_path):
    target = tmp_path / "real.py"
    target.write_text("x = 1\n")
    os.chmod(target, 0o640)
    (tmp_path / "link.py").symlink_to(target)
    await read(ctx, tmp_path / "link.py")
    result = await Edit().run(EditInput(file_path=str(tmp_path / "link.py"), old_string="1", new_string="2"), ctx)
    assert not result.is_error
    assert target.read_text() == "x = 2\n" and mode(target) == 0o640 and (tmp_path / "link.py").is_symlink()

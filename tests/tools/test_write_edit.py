import os
import time

from covey.tools.edit import Edit, EditInput
from covey.tools.read import Read, ReadInput
from covey.tools.write import Write, WriteInput


async def read(ctx, path):
    return await Read().run(ReadInput(file_path=path), ctx)


async def write(ctx, path, content):
    return await Write().run(WriteInput(file_path=path, content=content), ctx)


async def edit(ctx, path, old, new, **kw):
    return await Edit().run(EditInput(file_path=path, old_string=old, new_string=new, **kw), ctx)


def touch_later(path):
    """Change the file behind the agent's back, with a visibly different mtime."""
    path.write_text(path.read_text() + "external\n")
    later = time.time() + 5
    os.utime(path, (later, later))


async def test_write_creates_new_file_and_parents(ctx, tmp_path):
    result = await write(ctx, "deep/er/new.txt", "hi\n")
    assert not result.is_error and "Created" in result.content
    assert (tmp_path / "deep/er/new.txt").read_text() == "hi\n"
    assert str(tmp_path / "deep/er/new.txt") in ctx.read_files


async def test_write_refuses_existing_unread_file(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("old")
    refused = await write(ctx, "a.txt", "new")
    assert refused.is_error and "Read it first" in refused.content
    assert (tmp_path / "a.txt").read_text() == "old"
    await read(ctx, "a.txt")
    assert not (await write(ctx, "a.txt", "new")).is_error
    assert (tmp_path / "a.txt").read_text() == "new"


async def test_write_refuses_file_changed_since_read(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("old\n")
    await read(ctx, "a.txt")
    touch_later(tmp_path / "a.txt")
    refused = await write(ctx, "a.txt", "new")
    assert refused.is_error and "changed since" in refused.content


async def test_write_then_write_again_needs_no_read(ctx, tmp_path):
    await write(ctx, "a.txt", "one")
    assert not (await write(ctx, "a.txt", "two")).is_error


async def test_edit_requires_a_read_and_a_fresh_one(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("hello world\n")
    assert "Read it first" in (await edit(ctx, "a.txt", "hello", "bye")).content
    await read(ctx, "a.txt")
    touch_later(tmp_path / "a.txt")
    assert "changed since" in (await edit(ctx, "a.txt", "hello", "bye")).content


async def test_edit_replaces_once_and_shows_snippet(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    await read(ctx, "a.txt")
    result = await edit(ctx, "a.txt", "two", "TWO")
    assert not result.is_error
    assert "     2\tTWO" in result.content
    assert (tmp_path / "a.txt").read_text() == "one\nTWO\nthree\n"
    # The agent's own edit keeps the cache fresh: a second edit needs no new Read.
    assert not (await edit(ctx, "a.txt", "one", "ONE")).is_error


async def test_edit_rejects_identical_missing_and_ambiguous(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("x = 1\nx = 1\n")
    await read(ctx, "a.txt")
    assert "identical" in (await edit(ctx, "a.txt", "x", "x")).content
    assert "not found" in (await edit(ctx, "a.txt", "y = 2", "z")).content
    ambiguous = await edit(ctx, "a.txt", "x = 1", "x = 2")
    assert ambiguous.is_error and "2 times" in ambiguous.content and "replace_all" in ambiguous.content
    assert (tmp_path / "a.txt").read_text() == "x = 1\nx = 1\n"


async def test_edit_replace_all(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("x = 1\nx = 1\n")
    await read(ctx, "a.txt")
    result = await edit(ctx, "a.txt", "x = 1", "x = 2", replace_all=True)
    assert not result.is_error and "2 occurrences" in result.content
    assert (tmp_path / "a.txt").read_text() == "x = 2\nx = 2\n"


async def test_edit_missing_file_and_crlf_preserved(ctx, tmp_path):
    assert (await edit(ctx, "none.txt", "a", "b")).is_error
    (tmp_path / "w.txt").write_bytes(b"a\r\nb\r\n")
    await read(ctx, "w.txt")
    await edit(ctx, "w.txt", "b", "c")
    assert (tmp_path / "w.txt").read_bytes() == b"a\r\nc\r\n"


def test_permission_subjects_are_absolute(ctx, tmp_path):
    assert Write().permission_subject(WriteInput(file_path="a", content=""), ctx) == str(tmp_path / "a")
    subject = Edit().permission_subject(EditInput(file_path="a", old_string="x", new_string="y"), ctx)
    assert subject == str(tmp_path / "a")

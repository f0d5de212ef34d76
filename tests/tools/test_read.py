import os

from covey.tools.read import MAX_WHOLE_FILE_BYTES, Read, ReadInput


async def read(ctx, **kw):
    return await Read().run(ReadInput(**kw), ctx)


async def test_lines_are_numbered_like_cat_n(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    result = await read(ctx, file_path="a.txt")
    assert not result.is_error
    assert result.content == "     1\talpha\n     2\tbeta"


async def test_offset_is_the_first_line_and_limit_caps_lines(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("".join(f"l{i}\n" for i in range(1, 11)))
    result = await read(ctx, file_path="a.txt", offset=3, limit=2)
    assert result.content.splitlines()[:2] == ["     3\tl3", "     4\tl4"]
    assert "offset=5" in result.content
    assert (await read(ctx, file_path="a.txt", offset=0)).content.startswith("     1\tl1")


async def test_default_limit_is_2000_lines(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("x\n" * 2500)
    lines = (await read(ctx, file_path="a.txt")).content.splitlines()
    assert lines[1999] == "  2000\tx"
    assert "of 2500" in lines[2000]


async def test_long_lines_are_cut(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("y" * 2500)
    content = (await read(ctx, file_path="a.txt")).content
    assert content.startswith("     1\t" + "y" * 2000 + "...")
    assert "500 characters cut" in content


async def test_large_file_needs_a_range_or_allow_large(ctx, tmp_path):
    (tmp_path / "big.txt").write_text("z" * 100 + "\n" * (MAX_WHOLE_FILE_BYTES + 1))
    refused = await read(ctx, file_path="big.txt")
    assert refused.is_error and "offset" in refused.content and "limit" in refused.content
    assert not (await read(ctx, file_path="big.txt", offset=1, limit=5)).is_error
    assert not (await read(ctx, file_path="big.txt", allow_large=True)).is_error


async def test_binary_image_missing_and_directory_are_errors(ctx, tmp_path):
    (tmp_path / "b.bin").write_bytes(b"ab\0cd")
    (tmp_path / "p.png").write_bytes(b"not a png at all")
    binary = await read(ctx, file_path="b.bin")
    assert binary.is_error and "binary" in binary.content
    image = await read(ctx, file_path="p.png")
    assert image.is_error and "is not a PNG, JPEG, GIF or WebP image" in image.content
    missing = await read(ctx, file_path="nope.txt")
    assert missing.is_error and str(tmp_path / "nope.txt") in missing.content
    directory = await read(ctx, file_path=".")
    assert directory.is_error and "Glob" in directory.content and "ls" in directory.content


async def test_empty_file_gets_a_note(ctx, tmp_path):
    (tmp_path / "e.txt").write_text("")
    result = await read(ctx, file_path="e.txt")
    assert not result.is_error and "empty" in result.content


async def test_records_mtime_under_absolute_path(ctx, tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("x")
    await read(ctx, file_path="sub/../a.txt")
    assert ctx.read_files == {str(path): os.stat(path).st_mtime}


def test_permission_subject_is_the_absolute_path(ctx, tmp_path):
    assert Read().permission_subject(ReadInput(file_path="a.txt"), ctx) == str(tmp_path / "a.txt")
    assert Read().permission_subject(ReadInput(file_path="/etc/hosts")) == "/etc/hosts"


async def test_the_structured_result_is_claude_codes_file_part(ctx, tmp_path):
    (tmp_path / "f.txt").write_text("a\nb\nc\n")
    result = await Read().run(ReadInput(file_path=str(tmp_path / "f.txt"), offset=2, limit=1), ctx)
    assert Read().tool_use_result(result) == {"type": "text", "file": {
        "filePath": str(tmp_path / "f.txt"), "content": "b", "numLines": 1, "startLine": 2, "totalLines": 3}}

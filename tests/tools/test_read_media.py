"""Read of images (image blocks), PDFs (text page by page, ``pages``) and notebooks (cells with outputs)."""

import base64
import json

import pytest
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from covey.loop.execute import tool_result_block
from covey.tools.read import Read, ReadInput

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


async def read(ctx, **kw):
    return await Read().run(ReadInput(**kw), ctx)


def make_pdf(path, pages):
    """A PDF whose page n says ``Page text n``, written with pypdf."""
    writer = PdfWriter()
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica")})
    for n in range(1, pages + 1):
        page = writer.add_blank_page(200, 200)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})})
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 12 Tf 20 100 Td (Page text {n}) Tj ET".encode())
        page[NameObject("/Contents")] = writer._add_object(stream)
    with open(path, "wb") as f:
        writer.write(f)


async def test_an_image_comes_back_as_an_image_block_through_the_tool_result(ctx, tmp_path):
    (tmp_path / "dot.png").write_bytes(PNG)
    result = await read(ctx, file_path="dot.png")
    assert not result.is_error
    (block,) = result.blocks
    assert block == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                  "data": base64.b64encode(PNG).decode()}}
    wire = tool_result_block("toolu_1", result)
    assert wire["content"] == [block]  # what the Messages API receives
    assert str(tmp_path / "dot.png") in ctx.read_files


async def test_an_image_over_the_size_limit_is_refused(ctx, tmp_path, monkeypatch):
    monkeypatch.setattr("covey.tools.read_media.MAX_IMAGE_BYTES", 10)
    (tmp_path / "big.png").write_bytes(PNG)
    result = await read(ctx, file_path="big.png")
    assert result.is_error and "smaller copy" in result.content


async def test_a_short_pdf_reads_whole_page_by_page(ctx, tmp_path):
    make_pdf(tmp_path / "doc.pdf", 3)
    result = await read(ctx, file_path="doc.pdf")
    assert not result.is_error
    assert [line for line in result.content.splitlines() if line.startswith("--- Page")] == \
        ["--- Page 1 ---", "--- Page 2 ---", "--- Page 3 ---"]
    assert "Page text 2" in result.content
    assert result.data["file"]["totalPages"] == 3


async def test_pages_picks_a_range_and_a_long_pdf_needs_it(ctx, tmp_path):
    make_pdf(tmp_path / "long.pdf", 12)
    whole = await read(ctx, file_path="long.pdf")
    assert whole.is_error and "12 pages" in whole.content and "pages" in whole.content
    part = await read(ctx, file_path="long.pdf", pages="11-12")
    assert "Page text 11" in part.content and "Page text 12" in part.content and "Page text 1\n" not in part.content
    for bad, why in (("x", "is not a page or a range"), ("5-2", "runs forwards"), ("13", "has 12 pages"),
                     ("1-25", "at most 20")):
        result = await read(ctx, file_path="long.pdf", pages=bad)
        assert result.is_error and why in result.content, bad


async def test_a_broken_pdf_and_pages_on_a_text_file_are_errors(ctx, tmp_path):
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4 nothing else")
    assert (await read(ctx, file_path="bad.pdf")).is_error
    (tmp_path / "a.txt").write_text("x\n")
    result = await read(ctx, file_path="a.txt", pages="1")
    assert result.is_error and "PDF" in result.content


def notebook(cells, minor=5):
    return {"cells": cells, "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": minor}


async def test_a_notebook_reads_cell_by_cell_with_outputs_and_images(ctx, tmp_path):
    cells = [
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "Some words"]},
        {"cell_type": "code", "id": "calc", "metadata": {}, "execution_count": 1, "source": "print(1 + 1)",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["2\n"]},
                     {"output_type": "display_data", "metadata": {},
                      "data": {"image/png": base64.b64encode(PNG).decode(), "text/plain": "<Figure>"}}]},
        {"cell_type": "code", "id": "boom", "metadata": {}, "execution_count": 2, "source": "1/0",
         "outputs": [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero", "traceback": []}]},
    ]
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook(cells)))
    result = await read(ctx, file_path="nb.ipynb")
    assert not result.is_error
    assert '<cell id="intro"><cell_type>markdown</cell_type># Title\nSome words</cell id="intro">' in result.content
    assert '<cell id="calc">print(1 + 1)\n2\n</cell id="calc">' in result.content
    assert "ZeroDivisionError: division by zero" in result.content
    assert [block["type"] for block in result.blocks] == ["image"]
    wire = tool_result_block("toolu_1", result)
    assert [block["type"] for block in wire["content"]] == ["text", "image"]


async def test_a_file_that_is_not_a_notebook_is_an_error(ctx, tmp_path):
    (tmp_path / "nb.ipynb").write_text("{not json")
    result = await read(ctx, file_path="nb.ipynb")
    assert result.is_error and "not a readable notebook" in result.content


@pytest.mark.parametrize("name", ["x.bmp", "x.tiff"])
async def test_other_image_formats_are_refused_clearly(ctx, tmp_path, name):
    (tmp_path / name).write_bytes(b"\0\0")
    result = await read(ctx, file_path=name)
    assert result.is_error

"""What Read returns for files that are not plain text: images, PDFs and Jupyter notebooks.

Images become Messages API ``image`` blocks (the model sees them); PDFs their text page
by page (pypdf); notebooks their cells, each with its outputs, images among them as blocks.
"""

from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path
from typing import Any, BinaryIO

from covey.common.bounded import NotRegularFile, open_regular

MAX_IMAGE_BYTES = 3_750_000
"""The Messages API takes images up to 5 MB base64-encoded: about 3.75 MB of file."""
MAX_PDF_PAGES_WHOLE = 10
"""Claude Code reads a PDF of up to 10 pages whole; a longer one needs ``pages``."""
MAX_PDF_PAGES_PER_READ = 20
MAX_NOTEBOOK_OUTPUT_CHARS = 10_000
_IMAGE_MAGIC = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg", b"GIF87a": "image/gif",
                b"GIF89a": "image/gif"}
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp"}


class MediaError(Exception):
    """Why a file cannot be read as asked (the text goes back to the model)."""


def media_kind(path: Path) -> str | None:
    """``image``, ``pdf``, ``notebook``, or None for a file Read treats as text."""
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        return "image"
    return {".pdf": "pdf", ".ipynb": "notebook"}.get(suffix)


def image_block(path: Path) -> dict[str, Any]:
    with _open(path) as f:  # never more than the limit in memory, whatever the file's size
        data = f.read(MAX_IMAGE_BYTES + 1)
        size = os.fstat(f.fileno()).st_size
    if len(data) > MAX_IMAGE_BYTES:
        raise MediaError(f"{path} is {size // 1024} KiB, over the {MAX_IMAGE_BYTES // 1000} KB an image "
                         "may have; make a smaller copy (e.g. with Bash `convert -resize`) and Read that.")
    media_type = _image_type(data)
    if media_type is None:
        raise MediaError(f"{path} is not a PNG, JPEG, GIF or WebP image.")
    return {"type": "image", "source": {"type": "base64", "media_type": media_type,
                                         "data": base64.b64encode(data).decode("ascii")}}


def _image_type(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _IMAGE_MAGIC.items() if data.startswith(magic)), None)


def pdf_text(path: Path, pages: str | None) -> tuple[str, int]:
    """The text of the asked pages (all, for a short PDF), each under a page header; and the page count."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        total = len(reader.pages)
    except (PdfReadError, ValueError, OSError) as exc:
        raise MediaError(f"{path} could not be read as a PDF: {exc}") from exc
    first, last = parse_pages(pages, total) if pages else (1, total)
    if not pages and total > MAX_PDF_PAGES_WHOLE:
        raise MediaError(f"{path} has {total} pages, over the {MAX_PDF_PAGES_WHOLE} read whole: pass `pages` "
                         f"(e.g. \"1-{MAX_PDF_PAGES_PER_READ}\"), at most {MAX_PDF_PAGES_PER_READ} pages a call.")
    texts = [f"--- Page {n} ---\n{(reader.pages[n - 1].extract_text() or '').strip() or '(no text on this page)'}"
             for n in range(first, last + 1)]
    return "\n\n".join(texts), total


def parse_pages(pages: str, total: int) -> tuple[int, int]:
    """``"3"`` or ``"1-5"`` as a 1-based inclusive range inside a PDF of ``total`` pages."""
    found = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", pages)
    if found is None:
        raise MediaError(f"pages {pages!r} is not a page or a range such as \"3\" or \"1-5\".")
    first, last = int(found[1]), int(found[2] or found[1])
    if first < 1 or last < first:
        raise MediaError(f"pages {pages!r}: pages count from 1 and a range runs forwards.")
    if first > total:
        raise MediaError(f"pages {pages!r}: the PDF has {total} pages.")
    if last - first + 1 > MAX_PDF_PAGES_PER_READ:
        raise MediaError(f"pages {pages!r} asks for {last - first + 1} pages; at most {MAX_PDF_PAGES_PER_READ} a call.")
    return first, min(last, total)


def load_notebook(path: Path) -> dict[str, Any]:
    try:
        with _open(path) as f:
            notebook = json.loads(f.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MediaError(f"{path} is not a readable notebook (.ipynb JSON): {exc}") from exc
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise MediaError(f"{path} is not a Jupyter notebook: it has no 'cells' list.")
    return notebook


def _open(path: Path) -> BinaryIO:
    """The file, if regular (a FIFO swapped in after Read's check must not block the read)."""
    try:
        return open_regular(path)
    except NotRegularFile as exc:
        raise MediaError(f"{exc}; Read reads regular files only.") from exc


def cell_id(cell: dict[str, Any], index: int) -> str:
    """A cell's id; cells of notebooks older than nbformat 4.5 have none and go by ``cell-<index>``."""
    return str(cell.get("id") or f"cell-{index}")


def notebook_blocks(notebook: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The cells as text (each tagged with its id, outputs after its source) and the outputs' images."""
    language = (notebook.get("metadata") or {}).get("language_info", {}).get("name", "python")
    texts, images = [], []
    for index, cell in enumerate(notebook["cells"]):
        ident, kind = cell_id(cell, index), cell.get("cell_type", "code")
        head = f'<cell id="{ident}">' + (f"<cell_type>{kind}</cell_type>" if kind != "code" else "")
        parts = [head + _source(cell)]
        for output in cell.get("outputs") or []:
            text, image = _output(output)
            parts += [text] if text else []
            images += [image] if image else []
        texts.append("\n".join(parts) + f'</cell id="{ident}">')
    return f"<notebook language={language!r}>\n" + "\n".join(texts) + "\n</notebook>", images


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _output(output: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    kind = output.get("output_type")
    if kind == "stream":
        return _cut(_source({"source": output.get("text", "")})), None
    if kind == "error":
        return _cut(f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"), None
    data = output.get("data") or {}
    for media_type in ("image/png", "image/jpeg"):
        if media_type in data:
            encoded = "".join(data[media_type]) if isinstance(data[media_type], list) else data[media_type]
            return "", {"type": "image", "source": {"type": "base64", "media_type": media_type,
                                                     "data": encoded.replace("\n", "")}}
    return _cut(_source({"source": data.get("text/plain", "")})), None


def _cut(text: str) -> str:
    if len(text) <= MAX_NOTEBOOK_OUTPUT_CHARS:
        return text
    return text[:MAX_NOTEBOOK_OUTPUT_CHARS] + f"\n... [{len(text) - MAX_NOTEBOOK_OUTPUT_CHARS} characters of output cut]"

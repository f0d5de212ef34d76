"""Bounded text: cutting what reaches the model, and reading a stream without keeping all of it.

Whatever a hook, a tool or a server prints is untrusted and may be any size. Each
cap keeps the head of the text and says, in the text the model reads, how much
there was and how much was kept, so the model knows it saw only a part.
"""

from __future__ import annotations

import asyncio
import codecs
from dataclasses import dataclass

_CHUNK_BYTES = 65536


def cut_text(text: str, limit: int, *, what: str = "output", total: int | None = None, hint: str = "") -> str:
    """``text`` whole when it fits in ``limit`` characters, else its first ``limit`` and a note.

    ``total``: the full length when ``text`` is already a part of something longer
    (a stream read only in part); ``hint``: what to do to see the rest.
    """
    whole = max(total or 0, len(text))
    if whole <= limit:
        return text
    note = f"[{what} cut: {whole:,} characters, first {limit:,} kept{'; ' + hint if hint else ''}]"
    return f"{text[:limit]}\n{note}"


@dataclass(frozen=True)
class Captured:
    """The head of a stream, decoded, and how long the whole stream was."""

    text: str
    total_chars: int
    """Characters the stream held in all (counted while the rest was read and dropped)."""

    @property
    def complete(self) -> bool:
        return len(self.text) == self.total_chars


async def read_bounded(stream: asyncio.StreamReader | None, keep_chars: int) -> Captured:
    """Read ``stream`` to its end, keeping only the first ``keep_chars`` characters.

    Reading on (and dropping) after the cap lets the writer finish instead of
    blocking on a full pipe, while memory stays bounded by ``keep_chars``.
    """
    if stream is None:
        return Captured("", 0)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    kept: list[str] = []
    kept_chars = total = 0
    while chunk := await stream.read(_CHUNK_BYTES):
        text = decoder.decode(chunk)
        total += len(text)
        if kept_chars < keep_chars:
            kept.append(text[: keep_chars - kept_chars])
            kept_chars += len(kept[-1])
    tail = decoder.decode(b"", final=True)
    total += len(tail)
    if kept_chars < keep_chars:
        kept.append(tail[: keep_chars - kept_chars])
    return Captured("".join(kept), total)

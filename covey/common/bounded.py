"""Bounded text: cutting what reaches the model, and reading a stream without keeping all of it.

Whatever a hook, a tool or a server prints is untrusted and may be any size. Each
cap keeps the head of the text and says, in the text the model reads, how much
there was and how much was kept, so the model knows it saw only a part.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import stat
from dataclasses import dataclass
from typing import BinaryIO

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


class NotRegularFile(OSError):
    """A FIFO, a device or a socket where a file was expected: reading it could block for ever."""


_KINDS = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory"}


def file_kind(mode: int) -> str:
    """What a ``st_mode`` names, in words: ``a regular file``, ``a FIFO (named pipe)`` ..."""
    return "a regular file" if stat.S_ISREG(mode) else _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``open(path, "rb")`` for a regular file only; anything else raises :class:`NotRegularFile` at once.

    Opened with ``O_NONBLOCK`` so that opening a FIFO with no writer does not hang
    (a plain open would wait for one for ever); the kind is then checked on the open
    descriptor, so a file swapped for a FIFO after a ``stat`` is caught too.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(f"{os.fspath(path)} is {file_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)  # a regular file's reads never block anyway; keep normal semantics
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise

"""Files a hostile repository can ship in place of a config: special files, a sparse 200 MB file,
bytes that are not UTF-8. Each loader's tests pair them with the words its one line says."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

Maker = Callable[[Path], Any]


def huge(path: Path, head: bytes = b"") -> None:
    """A sparse 200 MB file (nothing on disk): a loader that read it whole would take 200 MB."""
    with open(path, "wb") as handle:
        handle.write(head)
        handle.truncate(200 * 1024 * 1024)


def special_files(too_large: str, not_utf8: bytes, *, prefix: str = "",
                  device: str = "a character device") -> dict[str, tuple[Maker, str]]:
    """name -> (what makes the file at a path, the words its loader's line says), for a loader
    whose size limit reads ``too_large`` and whose file ``not_utf8`` would be."""
    return {
        "fifo": (os.mkfifo, f"{prefix}a FIFO (named pipe), not a regular file"),
        "directory": (lambda path: path.mkdir(), f"{prefix}a directory, not a regular file"),
        "symlink-dev-zero": (lambda path: path.symlink_to("/dev/zero"), f"{prefix}{device}"),
        "huge-200mb": (huge, too_large),
        "invalid-utf8": (lambda path: path.write_bytes(not_utf8), "not UTF-8 text"),
    }

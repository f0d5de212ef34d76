"""Replacing a file's text so that a failure loses nothing: Edit, Write and NotebookEdit.

Truncating a file and then writing it leaves a torn file when the write fails (a full
disk, a killed process). Instead the new text goes to a temporary file beside the
target, is flushed to disk, given the original's permission bits, and renamed over
it: a reader sees the old file or the new one, never part of either.

A symlink is written through (its target is replaced; the link stays a link). Where a
rename would change what the file is, it is written in place as before: a file with
other hard links (they would keep the old text), one owned by another user (the new
file would be ours), or one in a folder this user may not create files in.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Put ``text`` (UTF-8, newlines as given) in ``path``, atomically where it can be;
    the file written (a symlink's target). Raises ``OSError``: the file is then unchanged,
    unless it is a ``PartialWrite`` (a write in place that failed midway)."""
    target = Path(os.path.realpath(path))
    data = text.encode("utf-8")
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None and (info.st_nlink > 1 or info.st_uid != os.geteuid()):
        _write_in_place(target, data)
        return target
    try:
        # A new file gets the umask's mode (0666 asked); an existing one's text stays
        # 0600 until its own mode is put back below.
        temp, descriptor = _create_temp(target, 0o666 if info is None else 0o600)
    except PermissionError:
        _write_in_place(target, data)
        return target
    try:
        if info is not None:
            # The rwx bits; set-id bits drop, as they do when their owner writes the file.
            os.fchmod(descriptor, stat.S_IMODE(info.st_mode) & 0o777)
        _write_all(descriptor, data)
        os.fsync(descriptor)  # the rename must not reach the disk before the data
        os.close(descriptor)
        descriptor = -1
        os.replace(temp, target)
    except BaseException:
        if descriptor >= 0:
            os.close(descriptor)
        temp.unlink(missing_ok=True)
        raise
    return target


def _create_temp(target: Path, mode: int) -> tuple[Path, int]:
    """A new file beside ``target``, hidden and named so a leftover says whose it was."""
    for _ in range(8):
        temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            return temp, os.open(temp, _CREATE, mode)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {str(target)!r}")


def _write_in_place(target: Path, data: bytes) -> None:
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        _write_all(descriptor, data)
    except OSError as e:  # after the truncation: the file is no longer what it was
        raise PartialWrite(e.errno, e.strerror or str(e)) from e
    finally:
        os.close(descriptor)


class PartialWrite(OSError):
    """A write in place failed after the file was truncated: it may now be cut short."""


def failure(path: str | os.PathLike[str], error: OSError) -> str:
    """What a tool tells the model when ``write_text`` failed: what happened to the file."""
    reason = error.strerror or str(error)
    if isinstance(error, PartialWrite):
        return (f"Could not write {path}: {reason}. It had to be written in place (it has other hard links, "
                "another owner, or a folder you may not create files in), so it may now be cut short.")
    return f"Could not write {path}: {reason}. Nothing was changed."


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]

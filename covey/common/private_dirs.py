"""Folders and files only this user may open: every place covey keeps transcripts, output,
worktrees, tokens, logs or its service socket (docs/architecture.md#files-covey-keeps).

A folder covey creates is made 0700 (each missing parent too). One that already exists
is used only when it is a real directory (not a symlink), owned by this user, and
nobody else may write in it; if group or others may only read or enter it, it is
tightened to 0700 (nobody else could have put anything in it, so what it holds is
still the user's own; folders an older covey made 0755 keep working). Anything else
is refused with a ``PrivateDirError``: a folder in a shared place (``/tmp``) with a
predictable name may have been made by someone else first, to read or plant what
covey writes there.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from covey.errors import UserError

FOLDER_MODE = 0o700
FILE_MODE = 0o600


class PrivateDirError(UserError):
    """A folder covey keeps private files in is not private to this user."""


def make_dirs(path: str | os.PathLike) -> Path:
    """Create ``path`` and its missing parents 0700 (the umask may only narrow it);
    folders that exist are left as they are."""
    path = Path(path)
    missing = []
    for folder in (path, *path.parents):
        if os.path.lexists(folder):
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:  # another process made it first: it is checked like any existing one
            pass
    return path


def private_dir(path: str | os.PathLike, what: str = "covey folder") -> Path:
    """``path`` as a folder only this user may use: created 0700, or checked (and a readable
    one tightened) as the module says. ``what`` names it in the error."""
    path = make_dirs(path)
    info = os.lstat(path)
    where = f"{what} {str(path)!r}"
    if stat.S_ISLNK(info.st_mode):
        raise PrivateDirError(f"{where} is a symlink, not a directory; covey will not follow it: remove it")
    if not stat.S_ISDIR(info.st_mode):
        raise PrivateDirError(f"{where} is not a directory")
    if info.st_uid != os.getuid():
        raise PrivateDirError(f"{where} belongs to uid {info.st_uid}, not to you (uid {os.getuid()}): "
                              "someone else may have made it first; remove it, or set TMPDIR to a folder of your own")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o022:
        raise PrivateDirError(
            f"{where} may be written by group or others (mode {mode:o}), so what it holds may not be yours: "
            f"check it and run `chmod 700 {path}`, or remove it")
    if mode & 0o077:
        os.chmod(path, FOLDER_MODE)
    return path


def user_temp_dir() -> Path:
    """``<tempdir>/covey-<uid>``: this user's private folder for scratch output and worktrees
    (``TMPDIR`` moves it, as it moves every temporary file)."""
    return private_dir(Path(tempfile.gettempdir()) / f"covey-{os.getuid()}", "covey's temporary folder")


def open_private(path: str | os.PathLike, flags: int) -> int:
    """A descriptor of a file only this user may read or write: created 0600, and an existing
    file of this user's that others may open is tightened to 0600."""
    descriptor = os.open(path, flags | os.O_CREAT, FILE_MODE)
    try:
        info = os.fstat(descriptor)
        if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(descriptor, FILE_MODE)
    except OSError:
        os.close(descriptor)
        raise
    return descriptor

"""Ray's auth token, kept private to the user around a local Ray covey starts.

Ray 2.60 turns token auth on for a new local Ray and, when it finds no token, writes one
to ``~/.ray/auth_token`` with the default umask (0644, in a 0755 ``~/.ray``): anyone on
the machine who reads it may run code in that Ray as this user. So before covey starts
a local Ray it makes ``~/.ray`` 0700 if it does not exist and, when Ray would generate a
token, writes one itself (0600, the same 256 random bits Ray's generator makes); after
the start it tightens the token file to 0600 whoever wrote it. A token the user gave in
``RAY_AUTH_TOKEN`` or at ``RAY_AUTH_TOKEN_PATH`` is theirs to place: it is left alone.
Plain Python; the tests call it with a temporary ``HOME`` and no Ray.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from covey.common.private_dirs import FILE_MODE, make_dirs


def default_token_path() -> Path:
    """Where Ray reads and writes its token when neither variable names one."""
    return Path.home() / ".ray" / "auth_token"


def _ray_will_generate() -> bool:
    """Whether a local ``ray.init`` would write a new token to the default path."""
    if os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH"):
        return False
    mode = os.environ.get("RAY_AUTH_MODE")
    if mode is not None:
        return mode.lower() == "token"
    try:  # Ray versions that turn token auth on by default for a new local Ray
        from ray._private.authentication.authentication_token_setup import enable_token_auth_by_default  # noqa: F401
    except ImportError:
        return False
    return True


def prepare_token() -> Path | None:
    """Before a local ``ray.init``: the token Ray would generate, written privately; the
    path written, or None when Ray will not write one (or a token is already there)."""
    if not _ray_will_generate():
        return None
    path = default_token_path()
    make_dirs(path.parent)  # 0700 when covey is the one to create ~/.ray
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:  # a token is there already: Ray will use it; tighten_token() sees to its mode
        return None
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(secrets.token_hex(32))
    return path


def tighten_token() -> bool:
    """After a local Ray started: make the default token file 0600 if it is this user's
    regular file and others may read it; True if its mode was changed."""
    path = default_token_path()
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or not info.st_mode & 0o077:
        return False
    os.chmod(path, FILE_MODE)
    return True

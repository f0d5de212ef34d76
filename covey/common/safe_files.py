"""Reading a file from a project or home folder, which may be hostile: bounded, regular, one-line reasons.

A cloned repository is untrusted input. Every loader of a settings file, a
config, a manifest or a definition reads through :func:`read_text` (a regular
file only, so a FIFO or ``/dev/zero`` never hangs it; at most ``max_bytes``, so
a 200 MB file is refused unread; UTF-8) and, for JSON, :func:`load_json` (a
document nested deeper than :data:`MAX_JSON_NESTING` is refused rather than
overflowing the stack). :data:`READ_ERRORS` is what they raise for a bad file and
:func:`reason` says why in one line, without the path (the caller names the file).
"""

from __future__ import annotations

import json
import os
from typing import Any

import yaml

from covey.common.bounded import NotRegularFile, open_regular

MAX_CONFIG_FILE_BYTES = 4 * 1024 * 1024
"""A settings file, ``.mcp.json``, ``~/.claude.json``, a plugin manifest or hooks file: no real one
comes near it (``~/.claude.json`` holds every project's history, so it is given room)."""
MAX_JSON_NESTING = 200
"""Arrays and objects a config may nest: no real one nests a tenth as deep."""


class FileTooLarge(ValueError):
    """A file over the size its reader allows; it was not read."""


class TooDeep(ValueError):
    """A document nested past the bound a reader allows."""


READ_ERRORS = (OSError, ValueError, RecursionError, yaml.YAMLError)
"""What reading and parsing a hostile file raises (``UnicodeDecodeError``, ``json.JSONDecodeError``,
:class:`FileTooLarge` and :class:`TooDeep` are ``ValueError`` s; :class:`~covey.common.bounded.NotRegularFile`
an ``OSError``)."""


def read_bytes(path: str | os.PathLike[str], max_bytes: int, *, what: str = "a file") -> bytes:
    """A regular file's bytes, never more than ``max_bytes + 1`` of them read.

    Raises :class:`~covey.common.bounded.NotRegularFile` for a FIFO, device, socket or directory (also
    behind a symlink) and :class:`FileTooLarge` for a larger file; ``what`` names the kind of file
    in that message (``the most a settings file may be``)."""
    with open_regular(path) as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLarge(f"too large: over {max_bytes:,} bytes ({_mib(max_bytes)}), the most {what} may be; not read")
    return data


def read_text(path: str | os.PathLike[str], max_bytes: int, *, what: str = "a file") -> str:
    """:func:`read_bytes` decoded as UTF-8 (``UnicodeDecodeError`` for anything else)."""
    return read_bytes(path, max_bytes, what=what).decode("utf-8")


def load_json(text: str | bytes) -> Any:
    """``json.loads(text)``, refused with :class:`TooDeep` past :data:`MAX_JSON_NESTING` levels."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise TooDeep(f"the JSON nests more than {MAX_JSON_NESTING} levels deep; refused") from None
    if _depth(data) > MAX_JSON_NESTING:
        raise TooDeep(f"the JSON nests more than {MAX_JSON_NESTING} levels deep; refused")
    return data


def read_json(path: str | os.PathLike[str], max_bytes: int = MAX_CONFIG_FILE_BYTES, *, what: str = "a file") -> Any:
    """A bounded regular file's JSON (any top level: the caller checks it is the object it wants)."""
    return load_json(read_text(path, max_bytes, what=what))


def reason(exc: BaseException) -> str:
    """Why a file could not be read or parsed, in one line, without its path."""
    if isinstance(exc, NotRegularFile):
        return str(exc).rpartition(" is ")[2] if " is " in str(exc) else str(exc)
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start:,})"
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        mark = exc.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        return " ".join(f"{exc.context + ': ' if exc.context else ''}{exc.problem}{where}".split())
    if isinstance(exc, RecursionError):
        return "nests too deeply to read"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return " ".join(str(exc).split()) or type(exc).__name__


def _depth(data: Any) -> int:
    """How deep arrays and objects nest in ``data``, without recursion (one pass)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            if level > MAX_JSON_NESTING:
                break
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):g} MiB"

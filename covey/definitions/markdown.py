"""Agent definition files read as Claude Code reads them (docs/definitions.md#how-files-are-read).

An agents directory is read with all its subfolders; a folder only organises files,
it never becomes part of an agent's name (the frontmatter ``name`` is the name).
A file Claude Code would skip (no frontmatter, no ``name``, no ``description``) is
skipped here too, with the reason; a file whose YAML cannot be read even after
Claude Code's repair is an error naming the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import yaml

from covey.common.frontmatter import TooLarge, parse_frontmatter, read_definition_text
from covey.common.safe_files import reason
from covey.common.safe_yaml import DuplicateKey, YamlRefused
from covey.model.effort import EFFORT_LEVELS, is_effort


@dataclass(frozen=True)
class Problem:
    """Why a file (or one field of it) was not taken: the field, if one, and the reason."""

    field: str | None
    message: str


@dataclass
class FileRead:
    """What one markdown file yields: its fields, or why it was skipped or failed."""

    fields: dict[str, Any] | None = None
    """Frontmatter keys plus ``prompt`` (the body); None when the file gives no definition."""
    error: Problem | None = None
    """The file is broken: the user meant an agent and must fix it."""
    skipped: list[Problem] = field(default_factory=list)
    """What was left out: the whole file (``fields`` None) or a field Claude Code ignores."""


def agent_files(directory: Path) -> list[Path]:
    """Every ``*.md`` file under ``directory``, subfolders (and symlinked ones) included,
    each real file once, in path order."""
    found: dict[str, Path] = {}
    seen_dirs: set[str] = set()
    for root, dirs, files in os.walk(directory, followlinks=True):
        real_root = os.path.realpath(root)
        if real_root in seen_dirs:  # a symlink loop, or a folder linked twice
            dirs[:] = []
            continue
        seen_dirs.add(real_root)
        for name in files:
            path = Path(root) / name
            if name.endswith(".md") and not path.is_dir():  # a FIFO or device is reported, never opened
                found.setdefault(os.path.realpath(path), path)
    return sorted(found.values())


def read_agent_file(path: Path, *, name_from_file: bool = False) -> FileRead:
    """Read one definition file. ``name_from_file``: a missing ``name`` is the file's stem
    (plugin agents, which Claude Code names by file) instead of a reason to skip."""
    try:
        text = read_definition_text(path)
        parsed = parse_frontmatter(text)
    except TooLarge as exc:
        return FileRead(error=Problem(None, str(exc)))
    except (OSError, UnicodeDecodeError) as exc:
        return FileRead(error=Problem(None, f"cannot read: {reason(exc)}"))
    except YamlRefused as exc:
        return FileRead(error=Problem(exc.key if isinstance(exc, DuplicateKey) else "frontmatter", str(exc)))
    except yaml.YAMLError as exc:
        return FileRead(error=Problem("frontmatter", f"invalid YAML, even with its values quoted: {reason(exc)}"))
    if parsed is None and not name_from_file:
        return _skip(None, "no frontmatter block (a first line '---' and a closing '---' line): not an agent definition")
    data = parsed.data if parsed is not None else None
    if not isinstance(data, (dict, type(None))):
        return _skip("frontmatter", "not a block of key: value pairs")
    if name_from_file:
        data = {"name": path.stem, **(data or {})}
    return _checked(dict(data or {}), parsed.body if parsed is not None else text, plugin=name_from_file)


def _checked(data: dict[str, Any], body: str, *, plugin: bool) -> FileRead:
    """Claude Code's required fields, then its handling of ``description`` and ``effort``."""
    if not _is_text(data.get("name")):
        return _skip("name", "no 'name' in the frontmatter (Claude Code requires it; a file without one is not an agent)")
    description = data.get("description")
    if not _is_text(description):
        if not plugin:
            return _skip("description", f"agent {data['name']!r} has no 'description' (Claude Code requires it)")
        description = description if isinstance(description, str) else ""
    # A literal backslash-n in a description is a line break, as Claude Code reads it.
    fields = {**data, "prompt": body.strip(), "description": description.replace("\\n", "\n")}
    read = FileRead(fields=fields)
    effort = data.get("effort")
    if effort is not None and not is_effort(effort):
        del fields["effort"]
        levels = ", ".join(EFFORT_LEVELS)
        read.skipped.append(Problem("effort", f"{effort!r} is not one of {levels} or an integer; ignored"))
    return read


def _skip(field_name: str | None, message: str) -> FileRead:
    return FileRead(skipped=[Problem(field_name, f"skipped: {message}")])


def _is_text(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())

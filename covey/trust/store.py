"""Which folders this person trusts, and which of a project's ``.mcp.json`` servers they approved:
kept in ``~/.covey/trust.json``, outside every repository, so a repository can never trust itself.

A trusted folder covers the folders under it. Claude Code's own record counts too: a folder
whose trust dialog was accepted in Claude Code (``hasTrustDialogAccepted`` in ``~/.claude.json``)
is trusted here, and its ``enabledMcpjsonServers`` there are approvals.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from covey.common.private_dirs import open_private, private_dir
from covey.errors import UserError

ALL = "*"
"""An approval of every server a project's ``.mcp.json`` names."""
MAX_BYTES = 4 << 20
"""A store (or ``~/.claude.json``) larger than this is not read: it is not one covey wrote."""


class TrustStore:
    """The trust records of the person whose home is ``home``."""

    def __init__(self, home: Path) -> None:
        self.home = Path(home)
        self.path = self.home / ".covey" / "trust.json"

    def trusted_by(self, folder: Path) -> str | None:
        """Why ``folder`` is trusted (the record that covers it), or None."""
        folder, mine, claude = _key(folder), self._folders(), _claude_projects(self.home)
        for path in (folder, *folder.parents):
            if path in mine:
                return f"trusted with `covey trust {path}`"
            if claude.get(str(path), {}).get("hasTrustDialogAccepted") is True:
                return f"trusted in Claude Code ({path})"
        return None

    def folders(self) -> list[str]:
        """The folders trusted with ``covey trust``, sorted."""
        return sorted(str(path) for path, entry in self._folders().items() if entry.get("trusted"))

    def trust(self, folder: Path) -> Path:
        folder = _key(folder)
        if not folder.is_dir():
            raise UserError(f"covey trust: {str(folder)!r} is not a folder")
        data = self._read()
        entry = data.setdefault("folders", {}).setdefault(str(folder), {})
        entry.update(trusted=True, since=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        self._write(data)
        return folder

    def revoke(self, folder: Path) -> bool:
        """Forget ``folder``'s trust (its approvals too); False if it was not trusted here."""
        data = self._read()
        found = data.get("folders", {}).pop(str(_key(folder)), None)
        if found is not None:
            self._write(data)
        return found is not None

    def approved(self, folder: Path) -> set[str]:
        """The ``.mcp.json`` servers of the project at ``folder`` the person approved (``ALL``: every one)."""
        folder = _key(folder)
        mine = self._read().get("folders", {}).get(str(folder), {}).get("mcpServers", [])
        theirs = _claude_projects(self.home).get(str(folder), {})
        names = {*_names(mine), *_names(theirs.get("enabledMcpjsonServers"))}
        if theirs.get("enableAllProjectMcpServers") is True:
            names.add(ALL)
        return names

    def approve(self, folder: Path, names: list[str]) -> None:
        data = self._read()
        entry = data.setdefault("folders", {}).setdefault(str(_key(folder)), {})
        entry["mcpServers"] = sorted({*_names(entry.get("mcpServers")), *names})
        self._write(data)

    def unapprove(self, folder: Path, names: list[str]) -> list[str]:
        """Withdraw approvals; the names that had been approved here."""
        data = self._read()
        entry = data.get("folders", {}).get(str(_key(folder)), {})
        had = _names(entry.get("mcpServers"))
        gone = [name for name in had if name in names or ALL in names]
        if gone:
            entry["mcpServers"] = [name for name in had if name not in gone]
            self._write(data)
        return gone

    def _folders(self) -> dict[Path, dict[str, Any]]:
        return {Path(path): entry for path, entry in self._read().get("folders", {}).items()
                if isinstance(entry, dict) and entry.get("trusted") is True}

    def _read(self) -> dict[str, Any]:
        data = _read_json(self.path)
        if not isinstance(data.get("folders"), dict):
            data["folders"] = {}
        return data

    def _write(self, data: dict[str, Any]) -> None:
        private_dir(self.path.parent, "covey's folder")
        temporary = self.path.with_name(f".trust.{os.getpid()}.json")
        descriptor = open_private(temporary, os.O_WRONLY | os.O_TRUNC)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            json.dump({"version": 1, **data}, file, indent=2, sort_keys=True)
        os.replace(temporary, self.path)


def _key(folder: Path) -> Path:
    return Path(os.path.realpath(Path(folder).expanduser()))


def _names(value: Any) -> list[str]:
    return [name for name in value if isinstance(name, str)] if isinstance(value, list) else []


def _claude_projects(home: Path) -> dict[str, dict[str, Any]]:
    projects = _read_json(home / ".claude.json").get("projects")
    return {path: entry for path, entry in projects.items() if isinstance(entry, dict)} \
        if isinstance(projects, dict) else {}


def _read_json(path: Path) -> dict[str, Any]:
    """A record file's object; a missing, unreadable, oversized or malformed one is empty (it
    grants nothing, so trust fails closed)."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}

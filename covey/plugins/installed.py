"""Where an enabled plugin is installed: Claude Code's ``~/.claude/plugins`` (docs/definitions.md#plugins).

``enabledPlugins`` in settings names plugins as ``name@marketplace``. Claude Code
records each installation in ``<config>/plugins/installed_plugins.json`` (``version``
2: ``{"plugins": {"name@marketplace": [{"scope", "installPath", "projectPath"?,
"version", "lastUpdated"}]}}``; version 1 held one object per plugin), the files
themselves under ``<config>/plugins/cache/<marketplace>/<name>/<version>/``.
``<config>`` is ``CLAUDE_CONFIG_DIR`` or ``~/.claude``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from covey.common.safe_files import READ_ERRORS, read_json

REGISTRY = Path("plugins") / "installed_plugins.json"
CACHE = Path("plugins") / "cache"


def config_dir(home: Path, env: Mapping[str, str]) -> Path:
    """Claude Code's configuration folder: ``CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else home / ".claude"


def install_path(plugin_id: str, config: Path, cwd: Path) -> tuple[Path | None, str]:
    """The folder of an installed plugin, and where it was found (or why it was not)."""
    registry = config / REGISTRY
    entries = _entries(_read(registry), plugin_id)
    chosen = _choose(entries, cwd)
    if chosen is not None:
        path = Path(str(chosen.get("installPath", ""))).expanduser()
        if path.is_dir():
            return path, str(registry)
        return None, f"{registry} says it is installed in {str(path)!r}, which does not exist"
    cached = _cached(config / CACHE, plugin_id)
    if cached is not None:
        return cached, str(config / CACHE)
    return None, f"it is not in {registry} nor under {config / CACHE}"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = read_json(path, what="a plugin registry")
    except READ_ERRORS:  # no registry (or a bad one): the cache is looked in instead
        return {}
    return data if isinstance(data, dict) else {}


def _entries(registry: dict[str, Any], plugin_id: str) -> list[dict[str, Any]]:
    plugins = registry.get("plugins")
    found = plugins.get(plugin_id) if isinstance(plugins, dict) else None
    if isinstance(found, dict):
        found = [found]
    return [entry for entry in found or [] if isinstance(entry, dict)]


def _choose(entries: list[dict[str, Any]], cwd: Path) -> dict[str, Any] | None:
    """This project's installation (project or local scope) first, else a user-wide one; the newest."""
    def here(entry: dict[str, Any]) -> bool:
        project = entry.get("projectPath")
        return isinstance(project, str) and Path(project).expanduser().resolve() == cwd.resolve()

    local = [e for e in entries if e.get("scope") in ("project", "local") and here(e)]
    wide = [e for e in entries if e.get("scope") not in ("project", "local")]
    for group in (local, wide):
        if group:
            return max(group, key=lambda e: str(e.get("lastUpdated", "")))
    return None


def _cached(cache: Path, plugin_id: str) -> Path | None:
    """The newest cached version of ``name@marketplace`` when the registry does not list it."""
    name, _, market = plugin_id.partition("@")
    folder = cache / market / name
    if not market or not folder.is_dir():
        return None
    versions = [p for p in folder.iterdir() if p.is_dir()]
    return max(versions, key=lambda p: p.stat().st_mtime) if versions else None

"""Every plugin a session loads: ``--plugin-dir`` folders and the plugins settings enable.

A ``--plugin-dir`` plugin beats an installed one of the same name (Claude Code's
rule for testing a local copy). An enabled plugin that is not installed, a bad
manifest or a bad part is a problem the session reports and runs without.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from covey.plugins.installed import config_dir, install_path
from covey.plugins.plugin import Plugin, PluginProblem, PluginRead, read_plugin

FLAG_ORIGIN = "--plugin-dir"


@dataclass
class PluginScan:
    plugins: dict[str, Plugin] = field(default_factory=dict)
    """The loaded plugins by name, in load order."""
    problems: list[PluginProblem] = field(default_factory=list)


def load_plugins(
    cwd: Path | str, *, plugin_dirs: Iterable[Path | str] = (), enabled: Mapping[str, str] | None = None,
    home: Path | str | None = None, env: Mapping[str, str] | None = None,
) -> PluginScan:
    """``plugin_dirs`` (``--plugin-dir``) and ``enabled`` (``{"name@market": "where enabled"}``)."""
    scan, project = PluginScan(), Path(cwd).resolve()
    for directory in plugin_dirs:
        _add(scan, read_plugin(Path(directory).expanduser(), FLAG_ORIGIN))
    config = config_dir(Path(home) if home is not None else Path.home(), env or {})
    for plugin_id, where in (enabled or {}).items():
        root, found_in = install_path(plugin_id, config, project)
        origin = f"enabledPlugins {plugin_id!r} ({where})"
        if root is None:
            scan.problems.append(PluginProblem(where, f"plugin {plugin_id!r} is enabled but not installed: "
                                                      f"{found_in}; run `claude plugin install {plugin_id}`"))
            continue
        _add(scan, read_plugin(root, origin, plugin_id.partition("@")[0]), plugin_id)
    return scan


def _add(scan: PluginScan, read: PluginRead, plugin_id: str = "") -> None:
    """The first plugin of a name stays: ``--plugin-dir`` ones are read first, so they win."""
    scan.problems.extend(read.problems)
    plugin = read.plugin
    if plugin is None:
        return
    kept = scan.plugins.get(plugin.name)
    if kept is not None:
        scan.problems.append(PluginProblem(str(plugin.root), f"plugin {plugin.name!r} is already loaded from "
                                                             f"{kept.root} ({kept.origin}); this copy not loaded"))
        return
    scan.plugins[plugin.name] = plugin.model_copy(update={"plugin_id": plugin_id}) if plugin_id else plugin

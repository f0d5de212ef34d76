"""Claude Code plugins: folders bundling agents, skills, commands and hooks (docs/definitions.md#plugins)."""

from covey.plugins.manifest import MANIFEST, ManifestError, PluginManifest, read_manifest
from covey.plugins.plugin import Plugin, PluginProblem, read_plugin
from covey.plugins.scan import FLAG_ORIGIN, PluginScan, load_plugins

__all__ = [
    "FLAG_ORIGIN",
    "MANIFEST",
    "ManifestError",
    "Plugin",
    "PluginManifest",
    "PluginProblem",
    "PluginScan",
    "load_plugins",
    "read_manifest",
    "read_plugin",
]

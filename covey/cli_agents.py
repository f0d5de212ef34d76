"""The text ``covey agents`` prints: the active agent types, the files that failed to load or were
skipped (as Claude Code skips them), the hooks skipped."""

from __future__ import annotations

from covey.agents.context import tools_summary
from covey.agents.loader import LoadResult


def list_agents_text(load_result: LoadResult) -> str:
    """One line per active type (name, source, model, tools), then one per load error, skipped
    file and skipped hook. A type without a model inherits its parent's."""
    definitions = sorted(load_result.definitions.values(), key=lambda d: (d.source != "built-in", d.name.lower()))
    width = max((len(d.name) for d in definitions), default=0)
    lines = [f"{len(definitions)} active agent type(s):"]
    for d in definitions:
        model = d.model or "inherit"
        where = f"{d.source} ({d.path})" if d.path else d.source
        lines.append(f"  {d.name.ljust(width)}  {where} · model: {model} · tools: {tools_summary(d)}")
    if load_result.errors:
        lines.append("")
        lines.append(f"{len(load_result.errors)} definition error(s):")
        lines.extend(f"  {error}" for error in load_result.errors)
    if load_result.skipped:
        lines.append("")
        lines.append(f"{len(load_result.skipped)} file(s) or field(s) skipped, as Claude Code skips them:")
        lines.extend(f"  {skip}" for skip in load_result.skipped)
    if load_result.warnings:
        lines.append("")
        lines.append(f"{len(load_result.warnings)} hook setting(s) skipped:")
        lines.extend(f"  {warning}" for warning in load_result.warnings)
    return "\n".join(lines)

"""covey's import graph has no cycle, and every import goes down the layers written here.

The graph is built from the source (AST): every ``import covey...`` a module runs,
at its top or inside a function, except those under ``if TYPE_CHECKING:`` (they
never run). A module may import modules of its own layer or of a lower one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "covey"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("words: errors, ids and the names written once", (
        "covey.errors", "covey.ids", "covey.lazy", "covey.frames", "covey.frontmatter", "covey.tool_names", "covey.flags",
        "covey.permissions.modes", "covey.tools.options", "covey.registry.limits", "covey.local_rays",
        "covey.private_dirs", "covey.bounded", "covey.safe_yaml",
    )),
    ("the model and the events", ("covey.model", "covey.events")),
    ("configuration: permissions, settings, hook, skill and plugin files", (
        "covey.permissions", "covey.settings", "covey.settings_files", "covey.settings_managed", "covey.settings_guard", "covey.hooks.config", "covey.hooks.conditions",
        "covey.hooks.read", "covey.skills", "covey.plugins",
    )),
    ("coordination state: mailbox, teams, running-task records, and the Ray shells of the first two", (
        "covey.teams", "covey.registry.records", "covey.registry.answers", "covey.registry.core",
        "covey.registry.checks", "covey.registry.payloads", "covey.registry.tree",
        "covey.actors.base", "covey.actors.mailbox", "covey.actors.team",
    )),
    ("tools, the loop and its hooks, MCP servers", ("covey.tools", "covey.loop", "covey.hooks", "covey.mcp")),
    ("agents: definitions, specs, the lifecycle, the tools that launch and coordinate them", (
        "covey.agents", "covey.runtime", "covey.tools.agent", "covey.tools.agent_launch", "covey.tools.agent_schema", "covey.tools.catalog",
        "covey.tools.team_tools", "covey.tools.task_tools", "covey.actors.travel", "covey.actors.inbox",
        "covey.actors.team_context", "covey.resume", "covey.resume_record",
    )),
    ("agent actors, their pool and the registry that launches and watches them", ("covey.actors", "covey.registry")),
    ("drivers: Ray start-up, sessions, inspection, the command line", (
        "covey.ray_runtime", "covey.ray_token", "covey.observe", "covey.session", "covey.render", "covey.demo",
        "covey.cli", "covey.cli_flags", "covey.cli_agents", "covey.cli_local", "covey.service", "covey.__main__", "covey",
    )),
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _target(name: str) -> str | None:
    """The covey module an import names (``covey.a.b.thing`` -> ``covey.a.b``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(node) for block in ast.walk(tree)
               if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
               for node in ast.walk(block)}
    names = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return {t for n in names if n.startswith("covey") and (t := _target(n)) is not None}


def graph() -> dict[str, set[str]]:
    return {name: _imports(path) - {name} for name, path in MODULES.items()}


def layer_of(module: str) -> int:
    """The layer of the most specific entry naming ``module`` (``covey`` itself: exactly)."""
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            hit = module == prefix or (prefix != "covey" and module.startswith(prefix + "."))
            if hit and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in tests/test_imports.py")
    return best


def cycle_in(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path (first module repeated at the end), or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_import_graph_has_no_cycle():
    cycle = cycle_in(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_every_import_goes_down_the_layers():
    upward = [
        f"{src} ({LAYERS[layer_of(src)][0]}) imports {dst} ({LAYERS[layer_of(dst)][0]})"
        for src, targets in sorted(graph().items()) for dst in sorted(targets) if layer_of(dst) > layer_of(src)
    ]
    assert upward == []


def test_the_runtime_is_a_leaf_of_the_agents_layer():
    """``covey.runtime`` travels in every spec: it may name definitions, limits and tool
    options (and read project context), never an actor, a handle or the registry at run time."""
    allowed = {"covey.agents.definition", "covey.agents.context", "covey.registry.limits", "covey.tools.options"}
    assert graph()["covey.runtime"] <= allowed


@pytest.mark.parametrize("edges, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
])
def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle(edges, expected):
    assert cycle_in(edges) == expected


def test_an_import_inside_a_function_counts_and_one_under_type_checking_does_not(tmp_path):
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from covey.session import Session\n"
              "def f():\n    from covey.cli import main\n")
    (tmp_path / "m.py").write_text(source)
    assert _imports(tmp_path / "m.py") == {"covey.cli"}

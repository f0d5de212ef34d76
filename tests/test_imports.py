"""covey's imports go down its layers, the layers are folders, and what runs has no cycle.

The layers are the table under "## Layers" in docs/architecture.md: the same table a
reader sees is the one checked here. Each row names folders (``tools/``) and top-level
modules (``errors``); a folder's every module is in its row's layer.

The graph is what runs: every ``import covey...`` a module executes, at its top or
inside a function (those under ``if TYPE_CHECKING:`` never run), and, for each, the
``__init__`` of every package on the way (importing ``covey.tools.options`` runs
``covey/tools/__init__.py`` first, and whatever that imports). A test in a fresh
interpreter checks the same thing from ``sys.modules``.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "covey"
ARCHITECTURE = ROOT.parent / "docs" / "architecture.md"


def read_layers(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The layer table of docs/architecture.md: (what the layer holds, its units), lowest first.

    A unit is ``name/`` (a folder) or ``name`` (a module at covey's top)."""
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    layers = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].isdigit():
            continue
        units = tuple(re.findall(r"`([^`]+)`", cells[1]))
        layers.append((cells[2], units))
        assert int(cells[0]) == len(layers), f"layer {cells[0]} out of order in docs/architecture.md"
    return layers


LAYERS = read_layers(ARCHITECTURE.read_text(encoding="utf-8"))


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()
PACKAGES = {name for name, path in MODULES.items() if path.name == "__init__.py"}


def unit_of(module: str) -> str:
    """The folder (``tools/``) or top-level module (``errors``) a module belongs to; ``covey``: the package itself."""
    parts = module.split(".")
    if len(parts) == 1:
        return "covey"
    if f"covey.{parts[1]}" in PACKAGES:
        return parts[1] + "/"
    return parts[1]


def _target(name: str) -> str | None:
    """The covey module an import names (``covey.a.b.thing`` -> ``covey.a.b``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _ancestors(module: str) -> list[str]:
    """The packages whose ``__init__`` runs before ``module`` (not the root ``covey``: see below)."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts))]


def _imports(path: Path, *, typed: bool = False) -> set[str]:
    """The covey modules importing this file runs, each with the package ``__init__`` files on its way;
    ``typed``: those it names under ``if TYPE_CHECKING:`` too (what the type checker reads)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = set() if typed else {
        id(node) for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test) for node in ast.walk(block)}
    names = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    targets = {t for n in names if n.startswith("covey") and (t := _target(n)) is not None}
    return targets | {package for t in targets for package in _ancestors(t)}


def _own(name: str) -> set[str]:
    """A module's own packages: Python runs their ``__init__`` before it, never because of it."""
    return set(_ancestors(name)) | ({name} if name in PACKAGES else set())


@functools.cache
def graph() -> dict[str, set[str]]:
    """Module -> the covey modules importing it runs: what it imports, and the ``__init__`` of
    each package on their way. (The root ``covey/__init__.py`` runs before every module and
    imports only ``covey.common.lazy``; it loads its public names on first use.)"""
    return {name: _imports(path) - _own(name) - {name} for name, path in MODULES.items()}


@functools.cache
def typed_graph() -> dict[str, set[str]]:
    """``graph`` with the imports under ``if TYPE_CHECKING:``: what a reader or the type checker follows."""
    return {name: _imports(path, typed=True) - _own(name) - {name} for name, path in MODULES.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The circles of ``edges``: each set of two or more nodes that all reach one another (a strongly
    connected component, Tarjan's algorithm, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, nexts = work[-1]
            nxt = next(nexts, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = stack[stack.index(node):]
                del stack[stack.index(node):]
                if len(members) > 1:
                    found.append(sorted(members))
    return sorted(found)


def layer_of_unit(unit: str) -> int:
    hits = [index for index, (_, units) in enumerate(LAYERS) if unit in units]
    if len(hits) != 1:
        where = "no layer" if not hits else "several layers"
        raise AssertionError(f"{unit!r} is in {where} of the table in docs/architecture.md")
    return hits[0]


def layer_of(module: str) -> int:
    return layer_of_unit(unit_of(module))


def package_graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for src, targets in graph().items():
        edges.setdefault(unit_of(src), set()).update(unit_of(t) for t in targets if unit_of(t) != unit_of(src))
    return edges


def cycle_in(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path (first node repeated at the end), or None."""
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


def test_every_folder_and_top_level_module_is_in_exactly_one_layer():
    units = {unit_of(m) for m in MODULES}
    listed = [unit for _, row in LAYERS for unit in row]
    assert sorted(u for u in units if u not in listed) == []
    assert sorted(u for u in listed if u not in units) == [], "the table names what is not in covey/"
    assert len(listed) == len(set(listed)), "a unit is in two layers"


def test_the_import_graph_has_no_cycle():
    cycle = cycle_in(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_folders_and_modules_import_each_other_without_a_cycle():
    cycle = cycle_in(package_graph())
    assert cycle is None, "cycle between folders: " + " -> ".join(cycle)


def test_every_import_goes_down_the_layers():
    upward = [
        f"{src} (layer {layer_of(src) + 1}) runs {dst} (layer {layer_of(dst) + 1})"
        for src, targets in sorted(graph().items()) for dst in sorted(targets) if layer_of(dst) > layer_of(src)
    ]
    assert upward == []


def test_a_package_init_imports_only_its_own_folder():
    """A package's ``__init__`` runs for every import of a module in it, so it imports only
    modules of its own folder (same layer) and ``covey.common.lazy``; covey's own ``__init__`` only ``covey.common.lazy``
    (its public names load on first use)."""
    strays = {name: sorted(t for t in _imports(MODULES[name])
                          if unit_of(t) != unit_of(name) and t not in ("covey.common", "covey.common.lazy"))
              for name in sorted(PACKAGES) if name != "covey"}
    assert {name: found for name, found in strays.items() if found} == {}
    assert _imports(MODULES["covey"]) == {"covey.common", "covey.common.lazy"}


_PROBE = """
import json, sys
loaded = {}
for name in sys.argv[1:]:
    for key in [k for k in sys.modules if k == "covey" or k.startswith("covey.")]:
        del sys.modules[key]
    __import__(name)
    loaded[name] = sorted(k for k in sys.modules if k.startswith("covey."))
print(json.dumps(loaded))
"""


def test_what_an_import_loads_in_a_fresh_interpreter_stays_in_its_layers():
    """The same rule, from ``sys.modules``: importing a module of a low layer loads nothing above it."""
    low = sorted(m for m in MODULES if m != "covey" and layer_of(m) <= 3)
    done = subprocess.run([sys.executable, "-c", _PROBE, *low], capture_output=True, text=True, timeout=300,
                          cwd=ROOT.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout)
    upward = [f"{name} loads {other}" for name, others in loaded.items() for other in others
              if other in MODULES and layer_of(other) > layer_of(name)]
    assert upward == []


def test_the_ports_load_no_actor_handle_or_registry_rule():
    """``covey.runtime.ports`` (its ``SessionRuntime``) travels in every spec: it may name
    definitions, limits and tool options (and read project context), never an actor, a handle or
    the registry's rules at run time."""
    assert {unit_of(m) for m in graph()["covey.runtime.ports"]} <= {"definitions/", "runtime/", "tools/", "common/"}


def test_covey_has_few_modules_at_its_top():
    """Everything lives in a feature folder but the package's own entry points and the words
    every layer shares (errors, ids)."""
    top = sorted(name for name, path in MODULES.items() if name.count(".") == 1 and path.parent == ROOT)
    assert len([n for n in top if n not in ("covey.__main__",)]) <= 6, top


def test_no_folder_holds_more_than_20_modules():
    sizes = {unit: sum(1 for name, path in MODULES.items() if unit_of(name) == unit and path.name != "__init__.py")
             for unit in {unit_of(m) for m in MODULES} if unit.endswith("/")}
    assert {unit: n for unit, n in sizes.items() if n > 20} == {}


@pytest.mark.parametrize("edges, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
])
def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle(edges, expected):
    assert cycle_in(edges) == expected


def test_an_import_inside_a_function_counts_and_one_under_type_checking_does_not(tmp_path):
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from covey.session import Session\n"
              "def f():\n    from covey.cli.main import main\n")
    (tmp_path / "m.py").write_text(source)
    assert _imports(tmp_path / "m.py") == {"covey.cli", "covey.cli.main"}


def test_importing_a_module_of_a_folder_counts_the_folders_init():
    assert "covey.tools" in _imports(MODULES["covey.loop.execute"])


def test_the_table_is_read_from_the_architecture_page():
    text = "x\n## Layers\n\n| layer | units | what |\n|---|---|---|\n| 1 | `errors`, `model/` | words |\n## Next\n"
    assert read_layers(text) == [("words", ("errors", "model/"))]




def test_no_circle_of_files_even_through_imports_only_the_type_checker_reads():
    """A circle of type-only imports runs nothing, but a reader and the type checker go round it: the
    ports (``covey.runtime.ports``) name no concrete class, and a plain core reads what it is given."""
    assert circles(typed_graph()) == []


@pytest.mark.parametrize("edges, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c", "e"}, "e": set()}, [["a", "b"], ["c", "d"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
])
def test_circles_are_the_strongly_connected_parts(edges, expected):
    assert circles(edges) == expected


def test_an_import_under_type_checking_counts_for_the_circles(tmp_path):
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from covey.cli.main import main\n"
    (tmp_path / "m.py").write_text(source)
    assert _imports(tmp_path / "m.py", typed=True) == {"covey.cli", "covey.cli.main"}


def test_the_ports_name_no_concrete_class():
    """The ports sit below both sides: neither they nor the tools' narrow protocols name an actor, a
    handle or a session, even for the type checker (each concrete class checks its own conformance)."""
    for ports in ("covey.runtime.ports", "covey.tools.services"):
        named = {unit_of(m) for m in typed_graph()[ports]}
        assert not named & {"actors/", "session/", "service/"}, (ports, named)

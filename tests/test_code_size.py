"""The size guide of docs/architecture.md ("How big a piece may be"): a module is as long as its
one job needs. Past the guide (300 lines a module, 50 a function) the suite warns, so a reader
looks at whether the piece still holds one idea; at twice the guide it fails: that is two jobs."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import covey

ROOT = Path(covey.__file__).parent
GUIDE_MODULE_LINES, GUIDE_FUNCTION_LINES = 300, 50
WALL = 2  # a piece this many times the guide is split by job
MAX_SESSION_LINES = 200


class SizeWarning(UserWarning):
    """A module or function past the size guide: look at it, split it only if it holds two ideas."""


def _modules() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def module_sizes() -> dict[str, int]:
    return {str(p.relative_to(ROOT)): p.read_text().count("\n") for p in _modules()}


def function_sizes() -> dict[str, int]:
    sizes = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                sizes[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = (node.end_lineno or node.lineno) - node.lineno + 1
    return sizes


def judge(sizes: dict[str, int], guide: int) -> tuple[dict[str, int], dict[str, int]]:
    """(past the guide, past the wall) of the pieces measured."""
    past = {name: n for name, n in sizes.items() if n > guide}
    return past, {name: n for name, n in past.items() if n > WALL * guide}


def test_modules_past_the_guide_warn_and_twice_the_guide_fail():
    past, walled = judge(module_sizes(), GUIDE_MODULE_LINES)
    for name, n in sorted(past.items()):
        warnings.warn(f"covey/{name}: {n} lines (guide {GUIDE_MODULE_LINES})", SizeWarning, stacklevel=1)
    assert walled == {}


def test_functions_past_the_guide_warn_and_twice_the_guide_fail():
    past, walled = judge(function_sizes(), GUIDE_FUNCTION_LINES)
    for name, n in sorted(past.items()):
        warnings.warn(f"covey/{name}: {n} lines (guide {GUIDE_FUNCTION_LINES})", SizeWarning, stacklevel=1)
    assert walled == {}


def test_the_judge_warns_past_the_guide_and_fails_past_the_wall():
    past, walled = judge({"a.py": 300, "b.py": 301, "c.py": 601}, 300)
    assert past == {"b.py": 301, "c.py": 601} and walled == {"c.py": 601}


def test_session_is_a_thin_face_under_200_lines():
    for path in (ROOT / "session").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.name == "Session":
                assert (node.end_lineno or node.lineno) - node.lineno + 1 < MAX_SESSION_LINES
                return
    raise AssertionError("no Session class in covey/session")

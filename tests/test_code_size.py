"""The size rules of docs/architecture.md ("How big a piece may be"): no module of covey over 300
lines, no function over 50, ``Session`` under 200. A piece that outgrows them is split by job."""

from __future__ import annotations

import ast
from pathlib import Path

import covey

ROOT = Path(covey.__file__).parent
MAX_MODULE_LINES, MAX_FUNCTION_LINES, MAX_SESSION_LINES = 300, 50, 200


def _modules() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def test_no_module_is_over_300_lines():
    long = {str(p.relative_to(ROOT)): n for p in _modules() if (n := p.read_text().count("\n")) > MAX_MODULE_LINES}
    assert long == {}


def test_no_function_is_over_50_lines_and_session_is_under_200():
    long, session = {}, None
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            if not isinstance(node, ast.ClassDef) and size > MAX_FUNCTION_LINES:
                long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = size
            if isinstance(node, ast.ClassDef) and node.name == "Session" and path.parent.name == "session":
                session = size
    assert long == {}
    assert session is not None and session < MAX_SESSION_LINES

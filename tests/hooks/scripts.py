"""Small hook commands written into a test's tmp_path."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any


def py_hook(tmp_path: Path, name: str, source: str) -> str:
    """A shell command running ``source`` as a Python script (stdin = the payload)."""
    script = tmp_path / f"{name}.py"
    script.write_text("import json, os, sys\n" + source)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def exit_with(tmp_path: Path, name: str, code: int, stderr: str = "") -> str:
    return py_hook(tmp_path, name, f"sys.stderr.write({stderr!r})\nsys.exit({code})\n")


def answer(tmp_path: Path, name: str, reply: dict[str, Any]) -> str:
    return py_hook(tmp_path, name, f"print(json.dumps({reply!r}))\n")


def dump_stdin(tmp_path: Path, name: str, out: Path) -> str:
    """Writes the payload, the cwd and CLAUDE_PROJECT_DIR to ``out`` as JSON."""
    return py_hook(tmp_path, name, (
        "payload = json.load(sys.stdin)\n"
        f"open({str(out)!r}, 'w').write(json.dumps({{'payload': payload, 'cwd': os.getcwd(),"
        " 'project': os.environ.get('CLAUDE_PROJECT_DIR')}))\n"
    ))


def pre(matcher: str, *commands: str, timeout: float | None = None) -> dict[str, Any]:
    hooks = [{"type": "command", "command": c, **({"timeout": timeout} if timeout else {})} for c in commands]
    return {"PreToolUse": [{"matcher": matcher, "hooks": hooks}]}


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())

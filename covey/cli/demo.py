"""``covey demo``: a throw-away project and the scripted model that explores it."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Iterator

SCENARIOS = Path(__file__).parent / "scenarios"

FILES = {
    "README.md": "# greetings\n\nA tiny library: `app.py` uses `greet` to welcome users.\n",
    "greet.py": 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n',
    "app.py": "from greet import greet\n\nprint(greet('world'))\n",
}


def demo_prompt() -> str:
    return "What does this project do? Look at its files before you answer."


@contextlib.contextmanager
def demo_project() -> Iterator[tuple[Path, Path]]:
    """A temporary project folder and the path of the demo's rule file."""
    with tempfile.TemporaryDirectory(prefix="covey-demo-") as tmp:
        project = Path(tmp)
        for name, text in FILES.items():
            (project / name).write_text(text)
        yield project, SCENARIOS / "demo.yaml"

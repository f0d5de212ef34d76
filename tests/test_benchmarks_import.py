"""Every benchmark module imports: a module moved in covey breaks ``python -m benchmarks.run``
only when that case runs, long after the move; this catches it in the suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(f"benchmarks.{path.stem}" for path in (ROOT / "benchmarks").glob("*.py") if path.stem != "__init__")

PROBE = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {type(exc).__name__}: {exc}")
print("\\n".join(failed))
"""


def test_every_benchmark_module_imports():
    assert "benchmarks.run" in MODULES and "benchmarks.fanout" in MODULES
    done = subprocess.run([sys.executable, "-c", PROBE, *MODULES], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", done.stdout

"""The code, its tests and its docs cite only what the repository holds: no section numbers of a
design document that is not in it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(r"\b" + "SP" + r"EC(?: \d|\.md| section)")
"""A citation of the design document the project started from, which is not in the repository."""


def test_nothing_cites_a_document_outside_the_repository():
    places = [*ROOT.glob("covey/**/*.py"), *ROOT.glob("covey/**/*.md"), *ROOT.glob("tests/**/*.py"),
              *ROOT.glob("docs/*.md"), *ROOT.glob("benchmarks/*.py"), ROOT / "README.md"]
    cited = [f"{path.relative_to(ROOT)}:{number}" for path in places
             for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1) if OUTSIDE.search(line)]
    assert cited == []

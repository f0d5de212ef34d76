"""Trust as a person gives it (``covey trust``, ``covey mcp approve``), for tests whose run has a HOME
of its own: the suite's own HOME trusts the temporary folders (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from covey.trust import TrustStore


def trust(home: Path | str, *folders: Path | str, mcp: tuple[str, ...] | list[str] = ()) -> None:
    """``home``'s person trusts each folder and approves the ``.mcp.json`` servers ``mcp`` names there."""
    store = TrustStore(Path(home))
    for folder in folders:
        store.trust(Path(folder))
        if mcp:
            store.approve(Path(folder), list(mcp))

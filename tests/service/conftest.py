"""Service tests get a short private service directory (a Unix socket path must stay under ~100 bytes)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest


@pytest.fixture
def service_root(monkeypatch) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="cs-", dir="/tmp")) / "svc"
    monkeypatch.setenv("COVEY_SERVICE_DIR", str(root))
    monkeypatch.delenv("COVEY_NO_SERVICE", raising=False)
    yield root
    shutil.rmtree(root.parent, ignore_errors=True)


def client_env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "COVEY_NO_SERVICE"}
    return {**env, "COVEY_SERVICE_DIR": str(root), **extra}

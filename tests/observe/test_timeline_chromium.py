"""The page ``covey trace`` writes, opened offline in headless Chromium: a screenshot that is not
blank, and a DOM holding every agent's row (issue 43). The screenshot stays in the test's folder.

Chromium is in CI (``.ci/run`` installs Debian's package); there a missing one fails the test,
elsewhere it skips."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from covey.observe.session_runs import runs_on_disk
from covey.observe.timeline import timeline_of
from covey.observe.timeline_page import write_page
from tests.observe.timeline_files import T0, write_session

pytest.importorskip("matplotlib")
PIL = pytest.importorskip("PIL.Image")

CHROMIUM = "/usr/bin/chromium"
TIMEOUT_S = 90


def _chromium() -> str:
    found = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    if found:
        return found
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"chromium is not installed ({CHROMIUM}): .ci/run installs it with apt-get install chromium")
    pytest.skip("chromium is not installed (apt-get install chromium)")


def _headless(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    """Chromium with nothing that reaches the network: no sync, no component updates, no QUIC, a new profile."""
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-dev-shm-usage",  # a container's small /dev/shm would crash the renderer
               f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)


def test_the_page_renders_offline_in_headless_chromium(tmp_path, monkeypatch):
    chromium = _chromium()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "proj").mkdir()
    runs, problems = runs_on_disk(write_session(tmp_path / "config", tmp_path / "proj"))
    timeline = timeline_of(runs, title="covey session", now_s=T0 + 20, problems=problems)
    url = write_page(tmp_path / "timeline.html", timeline).as_uri()

    shot = tmp_path / "timeline.png"
    ran = _headless(chromium, tmp_path / "profile-1", f"--screenshot={shot}", "--window-size=1400,900", url)
    assert shot.exists(), ran.stderr[-2000:]
    image = PIL.open(shot).convert("RGB")
    assert image.size == (1400, 900)
    colours = image.getcolors(1 << 24)
    assert len(colours) > 50, "the screenshot is blank"  # the picture has text, bars and lines
    purple = tuple(int(h, 16) for h in ("82", "50", "df"))  # the model requests' bars
    assert any(colour == purple for _, colour in colours)

    dom = _headless(chromium, tmp_path / "profile-2", "--dump-dom", url).stdout
    assert dom.count("<tr class=\"agent\"") == 5, dom[-2000:]
    for label in ("main:main00000000", "general-purpose:a", "worker:c", "Explore:b", "general-purpose:d"):
        assert label in dom
    assert "<svg" in dom

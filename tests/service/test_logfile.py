"""The service's log is turned over by size, and what the process prints follows it to the new file."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

from covey.service import logfile
from covey.service.logfile import ServiceLog


def _record(message: str) -> logging.LogRecord:
    return logging.LogRecord("covey.service", logging.INFO, __file__, 1, message, None, None)


def test_the_log_turns_over_past_its_size_and_keeps_its_backups(tmp_path):
    path = tmp_path / "service.log"
    handler = ServiceLog(path, max_bytes=1_000, backups=2)
    try:
        for n in range(60):
            handler.emit(_record(f"line {n:02d} " + "x" * 80))
    finally:
        handler.close()
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == ["service.log", "service.log.1", "service.log.2"]
    assert all(p.stat().st_size <= 1_000 for p in tmp_path.iterdir())
    assert "line 59" in path.read_text() and "line 59" not in (tmp_path / "service.log.1").read_text()
    assert "line 00" not in "".join(p.read_text() for p in tmp_path.iterdir())  # the oldest went


def test_a_descriptor_it_takes_along_writes_to_the_new_file(tmp_path):
    path = tmp_path / "service.log"
    printed = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)  # as the service's stderr is
    handler = ServiceLog(path, follows=[printed], max_bytes=500, backups=1)
    try:
        for n in range(10):
            handler.emit(_record(f"line {n} " + "x" * 80))
        os.write(printed, b"a traceback after the turn\n")
    finally:
        handler.close()
        os.close(printed)
    assert "a traceback after the turn" in path.read_text()
    assert "a traceback" not in (tmp_path / "service.log.1").read_text()


SERVICE = """
import logging, sys
from pathlib import Path
from covey.service import logfile
logfile.MAX_BYTES = 2_000
logfile.log_to(Path(sys.argv[1]))
for n in range(100):
    logging.getLogger("covey.service").info("line %d %s", n, "x" * 60)
print("printed at the end", flush=True)
"""


def test_the_service_logs_to_the_file_its_starter_gave_it_turned_over_with_stdout_along(tmp_path):
    path = tmp_path / "service.log"
    with open(path, "ab") as log:
        subprocess.run([sys.executable, "-c", SERVICE, str(path)], stdout=log, stderr=subprocess.STDOUT,
                       check=True, timeout=60)
    text = path.read_text()
    assert path.stat().st_size <= 2_000 and "line 99" in text and text.endswith("printed at the end\n")
    assert (tmp_path / "service.log.1").exists()


def test_a_service_run_by_hand_on_a_terminal_logs_to_its_stderr(tmp_path, monkeypatch):
    called = {}
    monkeypatch.setattr(logfile.logging, "basicConfig", lambda **kwargs: called.update(kwargs))
    assert logfile.log_to(tmp_path / "service.log") is None  # pytest's stderr is not that file
    assert called["stream"] is sys.stderr and not (tmp_path / "service.log").exists()

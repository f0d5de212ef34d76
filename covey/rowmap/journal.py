"""The map's journal: its output file, one JSON line per row that ended, written as the row ends.

Each line is appended, flushed and fsynced before the map counts the row done, so a map
killed at any moment (Ctrl-C, the driver, the service, a node) leaves every ended row's
outcome on disk; started again with the same output, it runs only the rows without one. A
line cut short by the kill (the file does not end in a newline) is dropped when the journal
opens: that row has no outcome and runs again. A later line for the same row (a failed row
run again with ``retry_failed``) replaces the earlier one.

The file holds what the agents answered, so a new one is made readable by this user only (0600).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from covey.errors import UserError

ENDED = ("completed", "failed")
"""The statuses a row's outcome has."""


class MapJournal:
    """The outcomes so far by row key, and the append of each new one (``path`` None: in memory only)."""

    def __init__(self, path: str | Path | None, task: str | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.task = task
        """What the rows were asked (the template, or the agent type): each line names it, and a
        journal of another task is refused (its outcomes would stand for answers never asked)."""
        self.outcomes: dict[str, dict[str, Any]] = {}
        self.dropped_tail = False
        """A torn last line (a kill mid-write) was dropped when it opened."""
        self._fd: int | None = None
        if self.path is not None:
            self._load(self.path)

    def _load(self, path: Path) -> None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise UserError(f"{path}: cannot read the map's output: {exc.strerror or exc}") from None
        whole, _, tail = data.rpartition(b"\n")
        if tail.strip():
            self.dropped_tail = True
            with path.open("r+b") as handle:  # appending after it would join two lines into one bad one
                handle.truncate(len(whole) + 1 if whole or data.startswith(b"\n") else 0)
        for number, line in enumerate(whole.decode("utf-8", errors="replace").splitlines(), start=1):
            if line.strip():
                outcome = _outcome(line, f"{path}:{number}")
                if self.task is not None and outcome.get("task", self.task) != self.task:
                    raise UserError(f"{path}:{number}: an outcome of another task ({outcome['task']!r}, not "
                                    f"{self.task!r}): give another --output for this one")
                self.outcomes[outcome["key"]] = outcome

    def done(self, key: str, *, retry_failed: bool = False) -> bool:
        """Whether the row has an outcome that counts (a failed one does not, with ``retry_failed``)."""
        outcome = self.outcomes.get(key)
        return outcome is not None and not (retry_failed and outcome["status"] == "failed")

    def record(self, outcome: dict[str, Any]) -> None:
        """Append the row's outcome and make it durable before returning."""
        if outcome.get("status") not in ENDED or "key" not in outcome:
            raise ValueError(f"not a row's outcome: {outcome!r}")
        if self.task is not None:
            outcome = {**outcome, "task": self.task}
        self.outcomes[outcome["key"]] = outcome
        if self.path is None:
            return
        line = (json.dumps(outcome, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        fd = self._open()
        os.write(fd, line)  # one write of a whole line with O_APPEND: never interleaved
        os.fsync(fd)

    def _open(self) -> int:
        if self._fd is None:
            assert self.path is not None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def ordered(self, keys: Iterable[str]) -> list[dict[str, Any] | None]:
        """The outcomes of ``keys`` in that order (None for a row without one)."""
        return [self.outcomes.get(key) for key in keys]


def _outcome(line: str, where: str) -> dict[str, Any]:
    try:
        outcome = json.loads(line)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: not a line covey map wrote ({exc.msg}); give another --output, "
                        "or remove the line to run its row again") from None
    if not isinstance(outcome, dict) or not isinstance(outcome.get("key"), str) or outcome.get("status") not in ENDED:
        raise UserError(f"{where}: not a row's outcome (a JSON object with its key and status); give another "
                        "--output, or remove the line to run its row again")
    return outcome

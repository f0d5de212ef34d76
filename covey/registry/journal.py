"""The registry's journal: what it must know again after its actor restarts.

A served session's registry (a covey service's kit, whose agent actors the service's
shared pool owns, so they outlive it) writes each launch, end and delivered notice to a
file before the change takes effect in its books: ``<covey dir>/registry/<kit>.jsonl``,
one line each, the payload pickled (a spec, a record, the agent actor's handle), and the
session runtime launches start with (once per runtime key). A launch that waits in the queue
(queued spawns) is written too: a restarted registry puts it back in the queue, or, if its
launch cannot be read back, fails it and its parent is told. Ray
restarts the actor (``max_restarts``) with the arguments it was first made with; the new
one reads the journal, rebuilds its books (``Restored``), and watches again every agent
the journal says is running. A line is flushed to the operating system when written: it
survives the actor's process being killed, not the machine losing power.

The file is the user's alone (``covey.common.private_dirs``); on a cluster the registry runs on
its session's home node, and a restart comes back on that node (its placement is
``soft=False``), so the node's own disk is where it is read again.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from covey.common.private_dirs import open_private, private_dir
from covey.registry.events import SPEND, Configured, Ended, Event, Started, MainRegistered, Notified, Queued, Spent
from covey.runtime.records import FinalReport

if TYPE_CHECKING:
    from covey.registry.books import Books
    from covey.registry.launcher import Launcher

log = logging.getLogger(__name__)


def journal_dir(home: Path | None = None) -> Path:
    return (home or Path.home()) / ".covey" / "registry"


@dataclass
class Restored:
    """What a journal says, read back in order."""

    session_id: str = ""
    limits: Any = None
    main: Any = None
    """The main agent's record, if its run was registered."""
    launched: dict[str, tuple[Any, Any, Any, str | None]] = field(default_factory=dict)
    """agent id → (record, spec, actor handle, output file), in launch order."""
    ended: dict[str, Any] = field(default_factory=dict)
    """agent id → its report."""
    notified: set[str] = field(default_factory=set)
    queued: dict[str, tuple[Any, Any, str | None, str, str | None]] = field(default_factory=dict)
    """agent id → (record, spec, runtime key, lane, output file): launches still waiting in the queue, oldest first."""
    runtimes: dict[str, Any] = field(default_factory=dict)
    """runtime key → the session runtime a queued launch starts with."""
    spent: dict[str, dict[str, Any]] = field(default_factory=dict)
    """agent id → its latest figures (``SPEND``) while it ran."""




LOST_IN_QUEUE = ("Not started: the session's registry restarted while this agent waited in the queue, and its "
                 "launch could not be read back from the registry's journal. Launch it again if it is still needed.")


class RegistryJournal:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: BinaryIO | None = None
        self._runtimes: set[str] = set()
        """The keys of the runtimes written since the journal (re)started."""

    @classmethod
    def for_actor(cls, actor_name: str, home: Path | None = None) -> "RegistryJournal":
        return cls(journal_dir(home) / f"{actor_name.replace(':', '_').replace('/', '_')}.jsonl")

    def begin(self, session_id: str, limits: Any = None) -> None:
        """A new session: the journal starts again."""
        self.close()
        self._runtimes = set()
        private_dir(self.path.parent, "covey registry folder")
        self._file = os.fdopen(open_private(self.path, os.O_WRONLY | os.O_TRUNC), "wb")
        self.write("session", session_id=session_id, payload=limits)

    def write(self, op: str, *, payload: Any = None, **fields: Any) -> bool:
        """Append one entry; False if it could not be written (no journal, or its payload does not pickle)."""
        if self._file is None:
            return False
        entry = {"op": op, **fields}
        if payload is not None:
            try:
                entry["payload"] = base64.b64encode(pickle.dumps(payload)).decode("ascii")
            except Exception as exc:  # the run goes on; only this entry cannot come back after a restart
                log.warning("the registry journal could not keep a %s entry (%s)", op, exc)
                return False
        self._file.write(json.dumps(entry).encode() + b"\n")
        self._file.flush()
        return True

    def record(self, event: Event) -> None:
        """Write one of the supervisor's events, as the entry ``read`` reads back."""
        match event:
            case MainRegistered(record=record):
                self.write("main", payload=record)
            case Started(record=record, spec=spec, actor=actor, runtime=runtime, output_file=output_file):
                self._runtime(runtime)
                self.write("launched", agent_id=record.agent_id, output_file=output_file, payload=(record, spec, actor))
            case Queued(record=record, spec=spec, runtime=runtime, lane=lane, output_file=output_file):
                self.write("queued", agent_id=record.agent_id, runtime_key=self._runtime(runtime), lane=lane,
                           output_file=output_file, payload=(record, spec))
            case Ended(agent_id=agent_id, report=report):
                self.write("ended", agent_id=agent_id, payload=report)
            case Notified(agent_id=agent_id):
                self.write("notified", agent_id=agent_id)
            case Spent(agent_id=agent_id, figures=figures):
                self.write("spent", agent_id=agent_id, payload=figures)
            case Configured(limits=limits):
                self.write("limits", payload=limits)

    def _runtime(self, runtime: Any) -> str | None:
        """The session runtime a launch starts with, written once per key (a restarted registry
        starts, revives and resumes agents with it); its key."""
        key = getattr(runtime, "key", None)
        if key is not None and key not in self._runtimes:
            self._runtimes.add(key)  # tried once: one that does not pickle is not tried at every launch
            self.write("runtime", key=key, payload=runtime)
        return key

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def reopen(self) -> None:
        """Go on appending to the journal read back (a restarted registry)."""
        self._file = os.fdopen(open_private(self.path, os.O_WRONLY | os.O_APPEND), "ab")

    def read(self) -> Restored:
        restored = Restored()
        try:
            lines = self.path.read_bytes().splitlines()
        except OSError:
            return restored
        for line in lines:
            try:
                entry = json.loads(line)
                payload = pickle.loads(base64.b64decode(entry["payload"])) if "payload" in entry else None
            except Exception as exc:  # a line cut short by the crash: what came before stands
                log.warning("the registry journal %s has a line that does not read (%s); it is skipped", self.path, exc)
                continue
            _apply(restored, entry, payload)
        return restored


def _apply(restored: Restored, entry: dict[str, Any], payload: Any) -> None:
    match entry.get("op"):
        case "session":
            restored.session_id, restored.limits = entry.get("session_id", ""), payload
        case "limits":
            restored.limits = payload
        case "main":
            restored.main = payload
        case "launched":
            record, spec, actor = payload
            restored.launched[entry["agent_id"]] = (record, spec, actor, entry.get("output_file"))
            restored.queued.pop(entry["agent_id"], None)  # its turn came: it started
        case "runtime":
            restored.runtimes[entry["key"]] = payload
        case "queued":
            record, spec = payload
            restored.queued[entry["agent_id"]] = (record, spec, entry.get("runtime_key"), entry.get("lane", "home"),
                                                  entry.get("output_file"))
        case "ended":
            restored.ended[entry["agent_id"]] = payload
        case "notified":
            restored.notified.add(entry["agent_id"])
        case "spent":
            restored.spent[entry["agent_id"]] = {**restored.spent.get(entry["agent_id"], {}), **payload}


def restore_books(books: Books[Any], launcher: Launcher[Any], restored: Restored,
                  ) -> tuple[list[tuple[str, Any, str | None]], list[str]]:
    """Put what the journal says in a fresh supervisor's books. Returns the agents to watch
    again (id, actor, output file) and the ended agents whose notice may still be owed. The
    launches that waited in the queue wait there again (``resume_queue`` starts those whose
    turn has come)."""
    core = books.core
    if restored.limits is not None:
        core.limits = restored.limits
    for runtime in restored.runtimes.values():  # in the order written: the last is the newest
        books.runtimes.keep(runtime)
    if restored.main is not None:
        core.records[restored.main.agent_id] = restored.main
        core.main_agent_id = restored.main.agent_id
        core.settle(restored.main)
    rewatch, owed = [], []
    for agent_id, (record, spec, actor, output_file) in restored.launched.items():
        record.output_file = output_file
        core.records[agent_id] = record
        core.settle(record)
        if spec is not None:
            books.specs[agent_id] = spec
        if agent_id not in restored.ended:
            for name, value in restored.spent.get(agent_id, {}).items():
                setattr(record, name, value)  # what it had spent when the registry went
            rewatch.append((agent_id, actor, output_file))
            continue
        core.finish(agent_id, restored.ended[agent_id])
        if agent_id in restored.notified:
            record.notified, record.delivering = True, False
            core.settle(record)
        else:
            owed.append(agent_id)
    owed += [agent_id for agent_id, queued in restored.queued.items()
             if _restore_queued(books, launcher, restored, agent_id, queued)]
    return rewatch, owed


def _restore_queued(books: Books[Any], launcher: Launcher[Any], restored: Restored, agent_id: str,
                    queued: tuple[Any, Any, str | None, str, str | None]) -> bool:
    """A launch that waited in the queue: back in the queue with what starts it, or ended (it
    was dropped, or its runtime cannot be read back: failed, written so). True if its notice
    may be owed."""
    record, spec, key, lane, output_file = queued
    core, runtime = books.core, restored.runtimes.get(key) if key else None
    record.output_file = output_file
    core.records[agent_id] = record
    report = restored.ended.get(agent_id)
    if report is None and (spec is None or (key is not None and runtime is None)):
        report = FinalReport(status="failed", text=LOST_IN_QUEUE)
        books.journal.record(Ended(agent_id, report))
    if report is None:
        if record.status == "running":  # a background launch Ray held: it waits for a slot like any queued one
            record.status = "queued"
        launcher.requeue(record, spec, runtime, lane, output_file)
        return False
    record.status, record.report, record.ended_at = report.status, report, record.ended_at or time.time()
    record.queued_for = None
    if agent_id in restored.notified:
        record.notified, record.delivering = True, False
    core.settle(record)
    return agent_id not in restored.notified

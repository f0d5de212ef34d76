"""The supervisor as three jobs around one ``Books``: the journal receives typed events (and a
registry without a journal keeps none), and each piece of state has one owner."""

from __future__ import annotations

import inspect
from typing import Any

from covey.registry import books, events, launcher, stopper, supervisor, watcher
from covey.registry.actor import _RegistryActor
from covey.registry.events import Configured, Ended, MainRegistered, NoJournal, Notified, Queued, Spent
from covey.registry.journal import RegistryJournal
from covey.registry.supervisor import Supervisor
from covey.runtime.answers import Launched
from covey.runtime.limits import Limits
from covey.runtime.records import FinalReport
from covey.teams.mailbox import Mailbox
from tests.registry.fakes import FakeClock, FakePool, request, runtime, settle, spec

ONE_SLOT = Limits(max_depth=2, max_concurrent=1, max_active=0, stall_ms=60_000, queue_spawns=True)


class Recorder:
    """A journal that keeps the events it is given, in order."""

    def __init__(self) -> None:
        self.events: list[events.Event] = []

    def record(self, event: events.Event) -> None:
        self.events.append(event)

    def of(self, agent_id: str) -> list[str]:
        """The names of the events about ``agent_id``, in order."""
        return [type(e).__name__ for e in self.events if _agent_of(e) == agent_id]


def _agent_of(event: events.Event) -> str | None:
    if isinstance(event, (Ended, Notified, Spent)):
        return event.agent_id
    if isinstance(event, (events.Started, Queued, MainRegistered)):
        return event.record.agent_id
    return None


def _supervisor(journal: Any = None) -> Supervisor:
    return Supervisor(ONE_SLOT, pool=FakePool(), mailbox=Mailbox(), clock=FakeClock(), put=lambda value: "ref",
                      journal=journal)


async def _run_one_and_queue_one(sup: Supervisor) -> None:
    """"a" runs and spends, "b" waits for its slot; "a" ends, "b" starts; "c" is queued and killed."""
    await sup.register_main("main", "m", "/tmp")
    shared = runtime()
    for agent_id in ("a", "b"):
        answer = await sup.launch(request(agent_id), spec(agent_id, runtime=shared), output_file=f"/t/{agent_id}")
        assert isinstance(answer, Launched)
    await sup.progress("a", cost_usd=0.25, turns=2, seq=1)
    await sup.progress("a", tools_in_flight=["Bash"], seq=2)  # no spend: no event
    sup.books.actors["a"].end("A done")
    await settle()
    assert await sup.launch(request("c"), spec("c", runtime=shared), output_file="/t/c")
    assert await sup.kill_agent("c")
    await settle()


async def test_the_supervisor_tells_its_journal_typed_events_in_the_order_they_happen():
    journal = Recorder()
    sup = _supervisor(journal)
    await _run_one_and_queue_one(sup)
    assert journal.of("main") == ["MainRegistered"]
    assert journal.of("a") == ["Started", "Spent", "Ended", "Notified"]
    assert journal.of("b") == ["Queued", "Started"]  # queued, then started when "a"'s slot freed
    # Killed in the queue, never launched: its end is journaled at once (a restart must not start
    # it), and again with its worktree seen to, before its notice.
    assert journal.of("c") == ["Queued", "Ended", "Ended", "Notified"]
    spent = next(e for e in journal.events if isinstance(e, Spent))
    assert spent.figures == {"cost_usd": 0.25, "turns": 2}
    launched_b = next(e for e in journal.events if isinstance(e, events.Started) and e.record.agent_id == "b")
    assert launched_b.runtime is not None and launched_b.output_file == "/t/b" and launched_b.actor.name == "actor-2"
    ended_c = next(e for e in journal.events if isinstance(e, Ended) and e.agent_id == "c")
    assert ended_c.report.status == "killed"
    await sup.close()


async def test_a_registry_without_a_journal_keeps_nothing_and_runs_the_same(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    sup = _supervisor()
    assert isinstance(sup.books.journal, NoJournal)
    await _run_one_and_queue_one(sup)
    assert {a: r.status for a, r in sup.books.core.records.items()} == {
        "main": "running", "a": "completed", "b": "running", "c": "killed"}
    assert list(tmp_path.iterdir()) == []  # no journal file anywhere
    await sup.close()


def test_each_event_is_written_as_the_entry_a_restarted_registry_reads_back(tmp_path):
    journal = RegistryJournal(tmp_path / "kit.jsonl")
    journal.record(Ended("x", FinalReport(status="completed", text="x")))  # not begun: nothing written
    assert not journal.path.exists()
    journal.begin("s")
    shared, record_a, record_b = runtime(), _record("a"), _record("b")
    journal.record(MainRegistered(_record("main")))
    journal.record(events.Started(record_a, spec("a"), "actor-1", shared, "/t/a"))
    journal.record(Queued(record_b, spec("b"), shared, "home", "/t/b"))
    journal.record(Spent("a", {"turns": 3}))
    journal.record(Ended("a", FinalReport(status="completed", text="A done")))
    journal.record(Notified("a"))
    journal.record(Configured(Limits(max_concurrent=3)))
    restored = journal.read()
    assert restored.main.agent_id == "main" and restored.limits.max_concurrent == 3
    assert restored.launched["a"][2:] == ("actor-1", "/t/a") and restored.spent == {"a": {"turns": 3}}
    assert restored.queued["b"][2:] == (shared.key, "home", "/t/b") and list(restored.runtimes) == [shared.key]
    assert restored.ended["a"].text == "A done" and restored.notified == {"a"}
    assert journal.path.read_text().count('"op": "runtime"') == 1  # once per key


def _record(agent_id: str) -> Any:
    from covey.runtime.records import RunRecord

    return RunRecord(agent_id=agent_id, owner_agent_id=None, parent_agent_id=None, depth=0, description="d",
                     prompt="p", agent_type="t", model="m", cwd="/tmp")


def test_each_job_holds_the_books_and_its_own_state_and_no_state_has_two_owners():
    sup = _supervisor()
    collaborators = {"books", "watcher", "launcher"}
    owned = {
        "books": set(vars(sup.books)),
        "launcher": set(vars(sup.launcher)) - collaborators,
        "watcher": set(vars(sup.watcher)) - collaborators,
        "stopper": set(vars(sup.stopper)) - collaborators,
    }
    assert owned == {
        "books": {"core", "pool", "runtimes", "actors", "specs", "watches", "journal", "_tasks"},
        "launcher": {"waiting", "placing"},
        "watcher": {"mailbox", "load_history", "finish_worktree", "place_problem", "node_alive",
                    "_revivals", "_resuming", "_forwarded"},
        "stopper": {"_watchdog"},
    }
    assert set(vars(sup)) == {"books", "launcher", "watcher", "stopper"}  # the supervisor only composes
    assert sup.launcher.books is sup.watcher.books is sup.stopper.books is sup.books


async def test_the_watchdog_is_the_stoppers_started_by_the_first_launch_and_stopped_by_close():
    sup = _supervisor()
    assert sup.stopper._watchdog is None
    await sup.reserve(request("a"))
    watchdog = sup.stopper._watchdog
    assert watchdog is not None
    await sup.launch(request("b"), spec("b", runtime=runtime()))
    assert sup.stopper._watchdog is watchdog  # one watchdog
    await sup.close()
    await settle()
    assert sup.stopper._watchdog is None and watchdog.cancelled()


def test_no_registry_class_inherits_through_more_than_two_covey_classes():
    modules = [books, events, launcher, stopper, supervisor, watcher]
    classes = [cls for module in modules for _, cls in inspect.getmembers(module, inspect.isclass)
               if cls.__module__ == module.__name__] + [_RegistryActor]
    chains = {cls.__name__: [c.__name__ for c in cls.__mro__ if c.__module__.startswith("covey.")] for cls in classes}
    assert chains["_RegistryActor"] == ["_RegistryActor", "Supervisor"]
    assert {name: chain for name, chain in chains.items() if len(chain) > 2} == {}

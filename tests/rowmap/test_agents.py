"""``RegistryRows`` against a stand-in registry (no Ray): a row's launch and its end as a row's
result, the registry's refusals (a spent budget stops the map, a full session waits for a slot),
and a lost registry (the service died): the map stops, no row is failed for it."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from covey.definitions.definition import AgentDefinition
from covey.errors import AgentUnavailable, LimitExceeded
from covey.events import ResultEvent
from covey.rowmap import agents
from covey.rowmap.agents import RegistryRows
from covey.rowmap.rows import read_rows
from covey.runtime.answers import Launched
from covey.runtime.records import FinalReport, RunRecord
from covey.runtime.spec import AgentSpec
from covey.transcripts.resume import SessionRoots


class Actor:
    def __init__(self, items):
        self.items = items

    async def follow(self, agent_id):
        for item in self.items:
            yield item


class Registry:
    def __init__(self, *answers, alive: bool = True) -> None:
        self.answers, self.alive, self.launched = list(answers), alive, []

    async def launch(self, request, spec, **kwargs):
        self.launched.append((request, spec, kwargs))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        record = RunRecord(agent_id=request.agent_id, owner_agent_id=None, parent_agent_id=request.parent_agent_id,
                           depth=1, description="", prompt="", model="m", agent_type="main", cwd=request.cwd)
        return Launched(record=record, actor=Actor(answer))

    async def back(self, wait_s=0.0):
        return self.alive

    async def report_of(self, agent_id):
        return None


def _rows(tmp_path, registry) -> RegistryRows:
    definition = AgentDefinition(name="main", description="d", prompt="p")

    def main_spec(prompt, runtime):
        return AgentSpec(session_id="map-session", agent_id="agent-main", definition=definition, prompt=prompt,
                         model_id="m", cwd=str(tmp_path), transcript_dir=str(tmp_path / "kept"))

    config = SimpleNamespace(roots=SessionRoots.of(), cwd=tmp_path, model_id="m")
    session = SimpleNamespace(main_spec=main_spec, config=config, slot=SimpleNamespace(mode="default"))
    rows = RegistryRows(session)  # type: ignore[arg-type]
    rows._runtime = SimpleNamespace(registry=registry, spread=False, shared_fs=False)  # type: ignore[assignment]
    return rows


def _run(rows: RegistryRows, prompt: str = "do it"):
    return asyncio.run(rows.run_row(read_rows([{"n": 1}])[0], prompt, 1))


def _ended(text: str = "done", **fields) -> list:
    result = ResultEvent(subtype="success", is_error=False, result=text, num_turns=1, duration_ms=5, duration_api_ms=5,
                         total_cost_usd=0.5, usage={}, session_id="x", structured_output=fields or None)
    return [result, FinalReport(status="completed", text=text, cost_usd=0.25, turns=1, duration_ms=7)]


def test_a_row_is_launched_under_the_map_in_a_session_of_its_own_and_its_end_is_its_result(tmp_path):
    registry = Registry(_ended("four", answer=4))
    result = _run(rows := _rows(tmp_path, registry))
    request, spec, kwargs = registry.launched[0]
    assert request.parent_agent_id == rows.map_id and request.depth == 1 and not request.background
    assert kwargs["follow"] and spec.depth == 0 and spec.session_id != "map-session" and spec.mentions == []
    assert (result.status, result.result, result.structured_output) == ("completed", "four", {"answer": 4})
    assert result.session_id == spec.session_id and result.cost_usd == 0.25  # the row's own cost, not the session's


def test_a_spent_budget_stops_and_a_full_session_waits_for_a_slot(tmp_path, monkeypatch):
    monkeypatch.setattr(agents, "SLOT_WAIT_S", 0.0)
    spent = LimitExceeded("Cannot spawn a sub-agent: the session budget of $1.00 is spent", "budget")
    assert _run(_rows(tmp_path, Registry(spent))).status == "stopped"
    full = LimitExceeded("Cannot spawn a sub-agent: 8 agents are running", "concurrency")
    registry = Registry(full, full, _ended())
    assert _run(_rows(tmp_path, registry)).status == "completed" and len(registry.launched) == 3


def test_a_lost_registry_stops_the_map_and_fails_no_row(tmp_path):
    result = _run(_rows(tmp_path, Registry(AgentUnavailable("registry actor died"))))
    assert result.status == "stopped" and "run the same map again" in result.error
    assert _run(_rows(tmp_path, Registry([], alive=False))).status == "stopped"  # its stream ended with nothing
    assert _run(_rows(tmp_path, Registry([], alive=True))).status == "failed"  # the row's own agent went


def test_rows_share_one_base_spec_and_a_rows_text_is_never_a_command(tmp_path):
    registry = Registry(_ended(), _ended())
    rows = _rows(tmp_path, registry)
    _run(rows, "/compact everything")
    _run(rows, "@/etc/passwd")
    (_, first, _), (_, second, _) = registry.launched
    assert first.prompt == "/compact everything" and first.compact_request is None and second.mentions == []
    assert first.agent_id != second.agent_id and first.session_id != second.session_id
    assert first.system is second.system  # the same bytes: one base spec per map

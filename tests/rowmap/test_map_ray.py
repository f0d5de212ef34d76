"""``covey.map`` on the shared test Ray with the scripted model: one agent per row through the
session's registry, results in row order, structured output with a JSON schema, each row's own
session (its transcript resumable), and a map stopped midway then run again with the same
output: only the rows without an outcome run, and the output holds each row once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import covey
from covey.rowmap.api import map_async
from tests.session.scripts import rule, scripted

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors

SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}


def _options(tmp_path: Path, model, **options):
    (tmp_path / "proj").mkdir(exist_ok=True)
    return dict(cwd=str(tmp_path / "proj"), model=model, transcript_dir=str(tmp_path / "kept"), pool_size=2,
                max_turns=4, **options)


def test_covey_map_runs_one_agent_per_row_and_returns_their_results_in_row_order(tmp_path):
    model = scripted(rule({"last_message_contains": "Summarise a.py"}, {"text": "A is fine"}),
                     rule({"last_message_contains": "Summarise b.py"}, {"text": "B is fine"}),
                     rule({"last_message_contains": "Summarise c.py"}, {"text": "C is fine"}))
    out = tmp_path / "out.jsonl"
    rows = [{"path": "a.py"}, {"path": "b.py"}, {"path": "c.py"}]
    results = covey.map("Summarise {path} in one line", rows, output=str(out), concurrency=2,
                        **_options(tmp_path, model))
    assert [r["result"] for r in results] == ["A is fine", "B is fine", "C is fine"]
    assert all(r["status"] == "completed" and r["turns"] == 1 and r["cost_usd"] > 0 for r in results)
    sessions = {r["session_id"] for r in results}
    assert len(sessions) == 3
    for session_id in sessions:  # each row's agent kept its transcript as a session's own, to --resume
        assert list((tmp_path / "kept").rglob(f"{session_id}.jsonl")), session_id
    assert len(out.read_text().splitlines()) == 3


def test_with_a_json_schema_each_row_answers_structured_output(tmp_path):
    model = scripted(rule({"last_message_contains": "What is 2+2"}, {"tool_use": [
        {"name": "StructuredOutput", "input": {"answer": 4}}]}),
        rule({"last_message_contains": "What is 3+3"}, {"tool_use": [
            {"name": "StructuredOutput", "input": {"answer": 6}}]}))
    rows = [{"q": "What is 2+2"}, {"q": "What is 3+3"}]
    run = asyncio.run(map_async("{q}?", rows, json_schema=SCHEMA, **_options(tmp_path, model)))
    assert [r["structured_output"] for r in run.results] == [{"answer": 4}, {"answer": 6}]
    assert run.summary.completed == 2 and run.summary.failed == 0


def test_a_map_stopped_midway_and_run_again_runs_only_the_rows_without_an_outcome(tmp_path):
    model = scripted(rule({"last_message_contains": "row"}, {"text": "ok"}, latency_s=0.4))
    out = tmp_path / "out.jsonl"
    rows = [{"n": n} for n in range(6)]
    options = _options(tmp_path, model)

    async def stopped_after_two() -> None:
        ended: list[dict] = []
        task: asyncio.Future | None = None

        def progress(kind, state, outcome):
            if kind == "row":
                ended.append(outcome)
                if len(ended) == 2 and task is not None:
                    task.cancel()  # as Ctrl-C does: the rows in flight are killed, not journaled

        task = asyncio.ensure_future(map_async("row {n}", rows, output=str(out), concurrency=2,
                                               on_progress=progress, **options))
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(stopped_after_two())
    first = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(first) == 2
    run = asyncio.run(map_async("row {n}", rows, output=str(out), concurrency=2, **options))
    assert (run.summary.skipped, run.summary.completed, run.summary.not_run) == (2, 4, 0)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[:2] == first  # the first run's outcomes kept as they were
    assert sorted(line["row"] for line in lines) == list(range(6))  # each row once
    assert [r["status"] for r in run.results] == ["completed"] * 6


def test_over_a_ray_data_dataset_the_results_are_a_dataset(tmp_path):
    data = pytest.importorskip("ray.data")  # the optional extra covey[data]
    model = scripted(rule({"last_message_contains": "Name x"}, {"text": "X"}),
                     rule({"last_message_contains": "Name y"}, {"text": "Y"}))
    rows = data.from_items([{"item": "x"}, {"item": "y"}])
    results = covey.map("Name {item}", rows, **_options(tmp_path, model))
    assert isinstance(results, data.Dataset)
    assert sorted((r["input"]["item"], r["result"]) for r in results.take_all()) == [("x", "X"), ("y", "Y")]


def test_an_agent_definition_as_the_task_runs_each_row_as_that_agent(tmp_path):
    reviewer = covey.AgentDefinition(name="reviewer", description="Reviews one file.",
                                     prompt="You review files. REVIEWER_PROMPT", tools=["Read"])
    model = scripted(rule({"system_contains": "REVIEWER_PROMPT", "tools_exclude": ["Bash"],
                           "last_message_contains": '"path":"a.py"'}, {"text": "reviewed a"}))
    results = covey.map(reviewer, [{"path": "a.py"}], **_options(tmp_path, model))
    assert [r["result"] for r in results] == ["reviewed a"], results


def test_the_sessions_budget_is_over_the_whole_map_and_a_spent_one_leaves_the_rest_for_later(tmp_path):
    model = scripted(rule({"last_message_contains": "row"}, {"text": "ok"}))
    out = tmp_path / "out.jsonl"
    rows = [{"n": n} for n in range(6)]
    # One row costs about $0.01 with the scripted model's estimated usage: the budget lets two or three run.
    run = asyncio.run(map_async("row {n}", rows, output=str(out), concurrency=1, max_budget_usd=0.02,
                                **_options(tmp_path, model)))
    assert run.summary.stopped and "budget" in run.summary.stopped, run.summary
    assert 1 <= run.summary.completed < 6 and run.summary.completed + run.summary.not_run == 6
    assert [r["status"] for r in run.results].count("not_run") == run.summary.not_run
    assert len(out.read_text().splitlines()) == run.summary.completed  # the rest have no outcome: a later run runs them

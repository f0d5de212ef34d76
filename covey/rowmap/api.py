"""``covey.map(task, rows, ...)``: one agent per row, each row once, resumable (docs/map.md).

Everything a map can refuse is checked before Ray starts: the rows (a bad JSONL line names its
file and line), the template against every row (a missing field names the row and field), the
journal (a line covey map did not write names its file and line). Then the rows run as agents
of one session (``RegistryRows``) under ``MapRunner``'s rules.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from covey.definitions.definition import AgentDefinition
from covey.errors import UserError
from covey.rowmap.journal import MapJournal
from covey.rowmap.rows import Row, is_dataset, read_rows
from covey.rowmap.runner import MapRunner, Progress
from covey.rowmap.summary import Summary
from covey.rowmap.template import Template, row_prompt

DEFAULT_CONCURRENCY = 8
"""Rows at once unless told (``-j``): each is an agent actor (~40 MiB), and Ray starts ~4-5 actors a second per 2 cores."""


@dataclass
class MapRun:
    """A map's outcome: each row's result dict in row order, and the summary of this run."""

    results: list[dict[str, Any]]
    summary: Summary


async def map_async(task: str | AgentDefinition, rows: Any, *, output: str | Path | None = None, retries: int = 0,
                    concurrency: int | None = None, retry_failed: bool = False, prompt: str | None = None,
                    on_progress: Progress | None = None, **options: Any) -> MapRun:
    """Run ``task`` once per row of ``rows``; options as ``covey.Session`` (model, tools, json_schema, ...)."""
    from covey.rowmap.agents import RegistryRows
    from covey.session import Session

    table = read_rows(rows)
    template = Template.parse(task) if isinstance(task, str) else None
    if template is not None and template.fields:  # every row checked before anything starts
        prompts = {row.key: row_prompt(template, row) for row in table}
    journal = MapJournal(output, task=task_label(task, prompt))
    if all(journal.done(row.key, retry_failed=retry_failed) for row in table):  # nothing to run: no session, no Ray
        summary = await MapRunner(journal, _unused, on_progress=on_progress).run(table, {})
        journal.close()
        return MapRun(results=results_of(table, journal), summary=summary)
    session = Session(**options)
    try:
        definition, template = _task(task, prompt, session.config.definitions)
        prompts = {row.key: row_prompt(template, row) for row in table}
        limit = session.config.limits.max_concurrent
        runner = MapRunner(journal, (agents := RegistryRows(session, definition)).run_row, retries=retries,
                           concurrency=min(concurrency or DEFAULT_CONCURRENCY, limit), retry_failed=retry_failed,
                           on_progress=on_progress)
        await agents.open(f"covey map over {len(table)} rows")
        summary = await runner.run(table, prompts)
        await agents.close(summary.text(), failed=summary.failed > 0)
    finally:
        journal.close()
        session.close()
    return MapRun(results=results_of(table, journal), summary=summary)


async def _unused(row: Row, prompt: str, attempt: int) -> Any:
    raise AssertionError("no row runs in a map whose rows all have an outcome")


def map_rows(task: str | AgentDefinition, rows: Any, *, live: bool | None = None, **options: Any) -> Any:
    """``covey.map``: synchronous, for scripts, Ray jobs and notebooks (``map_async`` inside a loop of your own).

    Returns the rows' result dicts in row order (``row``, ``input``, ``status``, ``result``,
    ``structured_output``, ``cost_usd``, ``turns``, ``session_id``, ``error``, ...), or a Ray
    Data dataset of them when ``rows`` is one. ``live``: a progress line under the running cell
    (default: in a Jupyter kernel, unless ``on_progress`` is given)."""
    from covey.observe.notebook import in_notebook

    if (in_notebook() if live is None else live) and options.get("on_progress") is None:
        from covey.rowmap.progress import NotebookProgress

        options["on_progress"] = NotebookProgress()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        run = asyncio.run(map_async(task, rows, **options))
    else:  # inside a running loop (Jupyter): a private loop in a worker thread, as covey.run does
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            run = pool.submit(asyncio.run, map_async(task, rows, **options)).result()
    if is_dataset(rows):
        import ray.data

        return ray.data.from_items(run.results)
    return run.results


map = map_rows
"""The public name, ``covey.map``."""


def _task(task: str | AgentDefinition, prompt: str | None,
          definitions: dict[str, AgentDefinition]) -> tuple[AgentDefinition | None, Template | None]:
    """The definition (if the task is one) and the prompt template (None: the row as JSON)."""
    if isinstance(task, AgentDefinition):
        return task, Template.parse(prompt) if prompt is not None else None
    if not isinstance(task, str):
        raise UserError(f"task: give a prompt template, an agent type's name or an AgentDefinition, not {type(task).__name__}")
    template = Template.parse(task)
    if not template.fields and task in definitions:
        return definitions[task], Template.parse(prompt) if prompt is not None else None
    if prompt is not None:
        raise UserError(f"prompt: only with an agent definition as the task ({task!r} is a template)")
    return None, template


def task_label(task: Any, prompt: str | None) -> str:
    """What a map's journal says the rows were asked: the template, or the agent type (and its prompt)."""
    if isinstance(task, AgentDefinition):
        task = f"agent {task.name}"
    return str(task) if prompt is None else f"{task} with {prompt}"


def results_of(rows: list[Row], journal: MapJournal) -> list[dict[str, Any]]:
    """Each row's outcome in row order; a row this run left without one is ``not_run``."""
    return [outcome if outcome is not None else {"row": row.index, "key": row.key, "input": row.data,
                                                 "status": "not_run"}
            for row, outcome in zip(rows, journal.ordered(row.key for row in rows))]

"""``rate_limits``: many agents under the API's per-minute limits, through the real ``covey``
command and the service it starts (issue 25, item 6).

One private HOME, service directory and ``RAY_TMPDIR`` for the whole case; each scenario its
own ``FakeRateLimitedAPI`` on 127.0.0.1 (so its own API identity, hence its own scheduler
actor). The main agent (its system prompt says "You are covey") answers its first request with
N background ``Agent`` calls; each child makes three requests (a ``Glob`` in its cwd, another,
then ``RESULT-<i>``, by the number of assistant messages in its body). The notices are read
from what is new in each of the main agent's requests (after its last assistant message), so
each is counted once even if the history were compacted.

Scenarios (sizes from the command line, ``python -m benchmarks.rate_limits --help``):

- ``done_means``: 30 children at 60 requests per minute through ``covey -p --output-format
  stream-json --verbose``: completions, the ``rate_limit_event`` lines, and the ``  rate `` lines
  of ``covey status`` polled during the run.
- ``requests``: 100 children at 120 requests per minute.
- ``input_tokens``: the same with an input-token limit as well, 100,000 per minute, which binds
  harder than the requests (cache reads not counted: the fake models the prompt cache,
  covey/model/prompt_cache.py, and counts only what is not read; ~1,200 tokens a request here).
- ``two_sessions``: two ``covey -p`` at once, each half the children, one API identity.
- ``queued``: 1,000 children, 50 at a time (``COVEY_QUEUE_SPAWNS=1``,
  ``COVEY_MAX_CONCURRENT_AGENTS=50``), no limit: notices, and the service's USS as children end.

The bound: with a bucket of L per minute and a total T that the fake API served (requests, or
the input tokens it counted), the bucket needs max(0, (T - L) / (L / 60)) seconds to admit them
all (it starts full). The figure is the first to the last served request, over that bound
(the larger of the two buckets' when both are set). The other scenarios run with
``COVEY_MAX_CONCURRENT_AGENTS=200`` so every child runs at once.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.cli import _covey, _stop
from benchmarks.common import log
from covey.model.prompt_cache import PromptCache, total_tokens
from tests.fake_ratelimited_api import FakeRateLimitedAPI
from tests.faults.scenario import Outcome, processes_with

ROOT = Path(__file__).resolve().parents[1]
FULL = {"done_means": 30, "done_means_rpm": 60, "children": 100, "rpm": 120, "input_tpm": 100_000,
        "two_sessions": 100, "queued": 1000, "queued_at_once": 50}
QUICK = {**FULL, "done_means": 6, "children": 10, "rpm": 20, "input_tpm": 20_000, "two_sessions": 10,
         "queued": 60, "queued_at_once": 10}
GOALS = {"max_429_share": 0.02, "max_ratio_vs_bound": 1.15}


class Children:
    """The fake API's reply function: main agents (by a mark in their prompt) and their children."""

    def __init__(self, n_per_main: int) -> None:
        self.n = n_per_main
        self.outcomes: dict[str, Outcome] = {}
        """Per main agent (its mark): every notice and result that reached it."""
        self.finished = 0
        self.fanned: set[str] = set()
        """Main agents that were answered their fan-out: once each (a compacted history has no
        assistant message again, and must not start the children a second time)."""
        self.unmarked: list[str] = []
        """Requests with the main agent's system prompt but no scenario mark (their starts)."""
        """Children that were answered their last turn."""
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        system = json.dumps(body.get("system") or "")
        assistants = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if "You are covey" in system:
            found = re.search(r"RLB-\d+", json.dumps(body["messages"]))
            if found is None:  # its first message is gone (compacted): the one main agent's, if one
                with self._lock:
                    self.unmarked.append(json.dumps(body["messages"])[:300])
                if len(self.outcomes) != 1:
                    return {"text": "ok"}
            mark = found.group(0) if found else next(iter(self.outcomes))
            with self._lock:
                first = mark not in self.fanned
                self.fanned.add(mark)
            if first:
                return {"content": [self._agent_call(mark, i) for i in range(self.n)]}
            last = max((i for i, m in enumerate(body["messages"]) if m["role"] == "assistant"), default=-1)
            news = Outcome.of(body["messages"][last + 1:], self.n)
            with self._lock:
                seen = self.outcomes.setdefault(mark, Outcome())
                for child, count in news.completed.items():
                    seen.completed[child] = seen.completed.get(child, 0) + count
                for agent, statuses in news.notices.items():
                    seen.notices.setdefault(agent, []).extend(statuses)
                seen.errors += news.errors
            return {"text": "noted"}
        child = re.search(r"RLB-\d+-CHILD-(\d+)", json.dumps(body["messages"])).group(1)
        if assistants >= 2:
            with self._lock:
                self.finished += 1
            return {"text": f"RESULT-{child}"}
        return {"content": [{"type": "tool_use", "id": f"toolu_{child}_{assistants}", "name": "Glob",
                             "input": {"pattern": f"*.nothing-{assistants}"}}]}

    @staticmethod
    def _agent_call(mark: str, i: int) -> dict[str, Any]:
        return {"type": "tool_use", "id": f"toolu_main_{i}", "name": "Agent", "input": {
            "description": f"child {i}", "prompt": f"{mark}-CHILD-{i}: do your part",
            "subagent_type": "general-purpose", "run_in_background": True}}

    def tally(self, mark: str) -> dict[str, int]:
        seen = self.outcomes.get(mark, Outcome())
        return {"completed": sum(1 for i in range(self.n) if seen.completed.get(i)),
                "duplicated": sum(c - 1 for c in seen.completed.values()) + sum(
                    len(s) - 1 for s in seen.notices.values()),
                "failed": sum(1 for s in seen.notices.values() if "completed" not in s) + len(seen.errors),
                "notices": sum(len(s) for s in seen.notices.values())}


    def unmarked_figures(self) -> dict[str, Any]:
        return {"unmarked_main_requests": len(self.unmarked), "unmarked_sample": self.unmarked[:2]}


class CacheReads:
    """The prompt cache's reads for a body (covey/model/prompt_cache.py), the same on every call."""

    def __init__(self) -> None:
        self.cache, self.memo, self._lock = PromptCache(), {}, threading.Lock()

    def __call__(self, body: dict[str, Any]) -> int:
        key = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with self._lock:
            if key not in self.memo:
                self.memo[key] = self.cache.usage(body)["cache_read_input_tokens"]
                self.cache.log.clear()
            return self.memo[key]


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COVEY_NO_SERVICE", "RAY_ADDRESS")}
    (tmp / "home").mkdir(exist_ok=True)
    # PYTHONPATH: this checkout's covey, in the client, the service and its workers alike.
    return {**env, "HOME": str(tmp / "home"), "ANTHROPIC_API_KEY": "x",
            "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])]),
            "COVEY_SERVICE_DIR": tempfile.mkdtemp(prefix="cs-", dir="/tmp"),
            "RAY_TMPDIR": tempfile.mkdtemp(prefix="cb-", dir="/tmp"), "COVEY_MAX_CONCURRENT_AGENTS": "200"}


def _start_service(env: dict[str, str], attempts: int = 4) -> dict[str, Any]:
    """``covey start`` until the service answers: on a loaded machine its Ray can take longer to
    start than the client waits (a retry waits for the one already starting)."""
    started, said = time.monotonic(), ""
    for _ in range(attempts):
        done = subprocess.run([*_covey(), "start"], env=env, capture_output=True, text=True, timeout=600)
        if done.returncode == 0:
            return {"s": round(time.monotonic() - started, 1), "attempts": _ + 1}
        said = (done.stderr or done.stdout)[-400:]
    raise RuntimeError(f"the covey service did not start: {said}")


def _start(env: dict[str, str], project: Path, mark: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*_covey(), "-p", f"{mark}: fan out", "--output-format", "stream-json", "--verbose", *extra],
                            cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen[str], timeout_s: float) -> dict[str, Any]:
    out, err = proc.communicate(timeout=timeout_s)
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    waits = [line["rate_limit_info"] for line in lines if line["type"] == "rate_limit_event"]
    own = {line["task_id"] for line in lines if line.get("subtype") == "task_notification"}
    own |= {line["session_id"] for line in lines if line["type"] == "system" and line.get("subtype") == "init"}
    return {"exit": proc.returncode, "rate_limit_events": len(waits),
            "waiting_agents": len({w.get("agentId") for w in waits}),
            "children_with_waits_shown": len({w.get("agentId") for w in waits} & own), "_own": own, "_waits": waits,
            "rate_limit_event_causes": sorted({f"{w.get('cause')}/{w.get('apiLimit')}" for w in waits}),
            "task_notification_lines": sum(1 for line in lines if line.get("subtype") == "task_notification"),
            "result_is_error": lines[-1].get("is_error") if lines and lines[-1]["type"] == "result" else None,
            **({"stderr": err[-600:]} if proc.returncode else {})}


def _served(api: FakeRateLimitedAPI, limits: dict[str, int]) -> dict[str, Any]:
    """What the fake API served, and the bound: the time its buckets need to admit all of it."""
    ok = [entry for entry in api.log if entry.status == 200]
    totals = {"requests": len(ok), "input_tokens": sum(entry.input_tokens for entry in ok)}
    bounds = {name: max(0.0, (totals[name] - limit) / (limit / 60)) for name, limit in limits.items()}
    span = ok[-1].at - ok[0].at if len(ok) > 1 else 0.0
    bound = max(bounds.values(), default=0.0)
    refused = api.count(429)
    return {"served": len(ok), "http_429": refused, "http_429_share": round(refused / max(len(ok), 1), 4),
            "input_tokens_counted": totals["input_tokens"], "first_to_last_s": round(span, 1),
            "bound_s": {name: round(b, 1) for name, b in bounds.items()},
            "ratio_vs_bound": round(span / bound, 3) if bound else None}


def _scenario(env: dict[str, str], project: Path, n: int, limits: dict[str, int], sessions: int = 1,
              extra_env: dict[str, str] | None = None, cache: bool = False) -> dict[str, Any]:
    """``sessions`` runs of ``covey -p`` at once, each launching ``n`` children, against one fake API."""
    replies = Children(n)
    kwargs: dict[str, Any] = {"count_input": total_tokens, "cache_reads": CacheReads()} if cache else {}
    with FakeRateLimitedAPI(requests_per_minute=limits.get("requests"),
                            input_tokens_per_minute=limits.get("input_tokens"), reply=replies, **kwargs) as api:
        run_env = {**env, "ANTHROPIC_BASE_URL": api.url, **(extra_env or {})}
        started = time.monotonic()
        procs = [_start(run_env, project, f"RLB-{k}") for k in range(sessions)]
        runs = [_finish(proc, 3600) for proc in procs]
        wall = time.monotonic() - started
    for run in runs:  # a wait shown in a run's stream that belongs to another run's child
        others = set().union(*(other["_own"] for other in runs if other is not run))
        run["rate_limit_events_of_another_run"] = sum(1 for w in run["_waits"] if w.get("agentId") in others)
    for run in runs:
        del run["_own"], run["_waits"]
    return {"children_per_session": n, "sessions": sessions, "limits_per_minute": limits, "wall_s": round(wall, 1),
            **_served(api, limits), "runs": runs,
            "children": [replies.tally(f"RLB-{k}") for k in range(sessions)], **replies.unmarked_figures()}


def _done_means(env: dict[str, str], project: Path, n: int, rpm: int) -> dict[str, Any]:
    """30 children at 60 requests per minute; ``covey status`` polled while they wait."""
    replies = Children(n)
    rate_lines: list[str] = []
    with FakeRateLimitedAPI(requests_per_minute=rpm, reply=replies) as api:
        run_env = {**env, "ANTHROPIC_BASE_URL": api.url}
        proc = _start(run_env, project, "RLB-0")
        finished: dict[str, Any] = {}
        # Its stream is read while it runs: a full pipe would stop the run's output.
        reader = threading.Thread(target=lambda: finished.update(_finish(proc, 3600)), daemon=True)
        reader.start()
        while reader.is_alive():
            reader.join(2.0)
            status = subprocess.run([*_covey(), "status"], env=run_env, capture_output=True, text=True, timeout=120)
            rate_lines += [line for line in status.stdout.splitlines() if line.startswith("  rate ")]
        run = finished
        del run["_own"], run["_waits"]
    waiting = [line for line in rate_lines if not re.search(r": 0 waiting", line)]
    return {"children": n, "requests_per_minute": rpm, **_served(api, {"requests": rpm}), "run": run,
            "tally": replies.tally("RLB-0"), **replies.unmarked_figures(), "status_polls_with_rate_lines": len(rate_lines),
            "status_rate_lines_with_a_queue": len(waiting), "status_sample": (waiting or rate_lines)[:3]}


def _queued(env: dict[str, str], project: Path, n: int, at_once: int) -> dict[str, Any]:
    """``n`` children ``at_once`` at a time against an API with no limit; the service's USS as they end."""
    replies = Children(n)
    samples: list[dict[str, Any]] = []
    done = threading.Event()

    def sample() -> None:
        import psutil

        while not done.wait(5.0):
            uss, count, agents = 0.0, 0, []
            for pid in processes_with(env["RAY_TMPDIR"]):
                try:
                    process = psutil.Process(pid)
                    mib = process.memory_full_info().uss / 2**20
                    title = " ".join(process.cmdline())
                except psutil.Error:
                    continue
                uss, count = uss + mib, count + 1
                if title.startswith(("ray::_AgentActor", "ray::agent:")):
                    agents.append(mib)
            samples.append({"finished": replies.finished, "uss_mib": round(uss), "processes": count,
                            "agent_actors": len(agents),
                            "agent_uss_mib_p50": round(statistics.median(agents), 1) if agents else None})

    # The usage says 1,000 input tokens a request, so the main agent's history never nears compaction.
    with FakeRateLimitedAPI(reply=replies, count_input=lambda body: 1000) as api:
        run_env = {**env, "ANTHROPIC_BASE_URL": api.url, "COVEY_QUEUE_SPAWNS": "1",
                   "COVEY_MAX_CONCURRENT_AGENTS": str(at_once)}
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.monotonic()
        try:
            # Each batch of notices is a turn of the main agent: more than covey's default 100.
            run = _finish(_start(run_env, project, "RLB-0", "--max-turns", str(n + 100)), 7200)
            del run["_own"], run["_waits"]
        finally:
            done.set()
            sampler.join()
    after = [s for s in samples if s["finished"] >= at_once]
    return {"children": n, "at_once": at_once, "wall_s": round(time.monotonic() - started, 1), "run": run,
            "tally": replies.tally("RLB-0"), **replies.unmarked_figures(), "served": api.count(200),
            "uss_mib_after_first": after[0]["uss_mib"] if after else None,
            "uss_mib_max_after_first": max((s["uss_mib"] for s in after), default=None),
            "uss_mib_last": samples[-1]["uss_mib"] if samples else None, "samples": samples}


def _sizes(argv: list[str] | None, quick: bool) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rate_limits")
    for name, value in (QUICK if quick else FULL).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=value)
    parser.add_argument("--only", help="comma-separated: done_means,requests,input_tokens,two_sessions,queued")
    parser.add_argument("--out", default="benchmarks/results/rate_limits.json")
    return parser.parse_args(argv)


def measure(tmp: Path, sizes: argparse.Namespace) -> dict[str, Any]:
    only = set(sizes.only.split(",")) if sizes.only else None
    project = tmp / "proj"
    project.mkdir(exist_ok=True)
    env = _env(tmp)
    out: dict[str, Any] = {"goals": GOALS, "sizes": {k: v for k, v in vars(sizes).items() if k not in ("only", "out")}}
    steps = {
        "done_means": lambda: _done_means(env, project, sizes.done_means, sizes.done_means_rpm),
        "requests": lambda: _scenario(env, project, sizes.children, {"requests": sizes.rpm}),
        "input_tokens": lambda: _scenario(env, project, sizes.children,
                                          {"requests": sizes.rpm, "input_tokens": sizes.input_tpm}, cache=True),
        "two_sessions": lambda: _scenario(env, project, sizes.two_sessions // 2, {"requests": sizes.rpm}, sessions=2),
        "queued": lambda: _queued(env, project, sizes.queued, sizes.queued_at_once),
    }
    try:
        out["service_start"] = _start_service(env)
        for name, step in steps.items():
            if only is None or name in only:
                log(f"rate_limits: {name}")
                try:
                    out[name] = step()
                except Exception as exc:  # one failing scenario must not lose the others' figures
                    out[name] = {"error": f"{type(exc).__name__}: {exc}"}
                log(f"rate_limits: {name} {json.dumps({k: v for k, v in out[name].items() if k != 'samples'})}")
    finally:
        out["stop"] = _stop(env)
        shutil.rmtree(env["COVEY_SERVICE_DIR"], ignore_errors=True)
        shutil.rmtree(env["RAY_TMPDIR"], ignore_errors=True)
    return out


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    """The benchmark runner's entry (``python -m benchmarks.run --only rate_limits``)."""
    return await asyncio.to_thread(measure, tmp, _sizes([], quick))


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.rate_limits [--quick] [--children 10] ...``: this case alone."""
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    sizes = _sizes([a for a in (argv if argv is not None else sys.argv[1:]) if a != "--quick"], quick)
    from benchmarks.common import prepare_env

    tmp = prepare_env()
    try:
        figures = measure(tmp, sizes)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    Path(sizes.out).parent.mkdir(parents=True, exist_ok=True)
    Path(sizes.out).write_text(json.dumps(figures, indent=2) + "\n")
    print(f"written: {sizes.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

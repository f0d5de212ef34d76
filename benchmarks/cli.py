"""``cli``: the real ``covey`` command through the covey service it starts, as a user meets it.

One private HOME, service directory and ``RAY_TMPDIR``, and one fake Messages API on
127.0.0.1 with real delays, for the whole case:

1. ``covey -p "say ok" --output-format stream-json``, cold (no service yet: this run
   starts it) and then warm: seconds from spawning the process to the first
   ``assistant`` line and to its exit.
2. The idle service: its processes' CPU over ``IDLE_WINDOW_S`` (per cent of one core)
   and their memory (USS), against the goal of 600 MiB; a bare Ray's, the bound.
3. Fan-outs through ``covey -p``: one message of N ``Agent`` calls (sync N=1 and N=20,
   background N=100), each child three turns of ``TURN_S`` (two ``Glob`` calls and its
   answer). Figure: the main agent's first to last model request (as the fake API saw
   them) over the ideal ``3 × TURN_S``. Each size runs three ways, as a user meets it: the
   first time on a fresh service (``covey stop``, then a ``say ok`` starts the service),
   immediately again (back to back), and settled (once the pool has ramped up to what the
   runs asked for: ``pool_settle``).
4. The peer in the same run: the very same fan-out through Claude Code's CLI (the one the
   claude-agent-sdk dev dependency bundles) against the same fake API, three times back to
   back (sync sizes: Claude Code's ``-p`` ends before background children do); and the
   baselines: the floor (``benchmarks.floor``: the settled run's request bodies replayed by a
   bare asyncio client against a fresh fake API; ``floor_ray``: each child's from a Ray actor
   of its own, made before the run; ``floor_ray_cold``: made when the fan-out comes, the bound
   of a first fan-out with an actor per child), and N ``AgentRunner``s in a process of their own running the child specs covey builds.
5. ``covey stop``: how long it takes, and the processes left after it (by the private ``RAY_TMPDIR``).
"""

from __future__ import annotations

import asyncio
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

from benchmarks.common import log
from benchmarks.cli_peer import claude_version, WAYS, bundled_claude, peer_env, ratio
from benchmarks.cli_phases import phases, quantiles
from benchmarks.floor import agent_of, replay_in_process
from tests.fake_messages_api import FakeMessagesAPI
from tests.faults.scenario import MAIN_MARK, Fanout, processes_with, wait_gone

TURN_S = 0.2
TURNS = 3
IDEAL_S = TURN_S * TURNS
IDLE_WINDOW_S = 10.0
FANOUTS = (("sync", 1), ("sync", 20), ("background", 100))
QUICK_FANOUTS = (("sync", 1), ("sync", 5), ("background", 10))
GOALS = {"say_ok_warm_first_answer_s": 0.2, "say_ok_cold_first_answer_s": 4.0, "idle_cpu_pct_of_core": 2.0,
         "idle_uss_mib": 600, "stop_s": 3.0,
         "sync_1_vs_floor": 1.05, "sync_20_vs_floor": 1.3, "background_100_vs_floor": 1.5}


def _covey() -> list[str]:
    exe = Path(sys.executable).parent / "covey"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "covey"]


class Replies:
    """The fake API's one reply function: "say ok", or the fan-out of the moment, whose
    main-agent requests are stamped as they arrive."""

    def __init__(self) -> None:
        self.fanout: Fanout | None = None
        self.main_stamps: list[float] = []
        self.stamps: list[tuple[str, float]] = []
        """Every fan-out request's agent (``main``, ``CHILD-<i>``) and arrival."""
        self.wall: dict[str, list[float]] = {}
        """The same arrivals on the wall clock (a transcript's clock), per agent."""
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(body["messages"])
        if self.fanout is None or (MAIN_MARK not in text and not re.search(r"CHILD-\d+", text)):
            return {"text": "ok"}
        with self._lock:
            now = time.monotonic()
            self.stamps.append((agent_of(body), now))
            self.wall.setdefault(agent_of(body), []).append(time.time())
            if MAIN_MARK in text:
                self.main_stamps.append(now)
        return self.fanout(body)

    def timing(self) -> dict[str, Any]:
        """Where a fan-out's time went, as the fake API saw it: when each child's first request
        came after the main agent's first (the launch), and each child turn's overhead: the time
        from one of its requests to the next beyond the model's ``TURN_S`` (the reply's trip,
        the tools, the next request's building and sending)."""
        by_agent: dict[str, list[float]] = {}
        for agent, at in self.stamps:
            by_agent.setdefault(agent, []).append(at)
        main = by_agent.pop("main", [])
        if not main or not by_agent:
            return {}
        firsts = sorted(times[0] - main[0] for times in by_agent.values())
        overheads = sorted((later - earlier - TURN_S) * 1000 for times in by_agent.values()
                           for earlier, later in zip(times, times[1:]))
        return {"first_child_request_after_main_s": round(firsts[0], 3),
                "last_child_request_after_main_s": round(firsts[-1], 3),
                "first_requests_spread_ms": round((firsts[-1] - firsts[0]) * 1000, 1),
                "turn_overhead_ms": quantiles(overheads)}


def _env(tmp: Path, api_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COVEY_NO_SERVICE", "RAY_ADDRESS")}
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return {**env, "HOME": str(home), "ANTHROPIC_BASE_URL": api_url, "ANTHROPIC_API_KEY": "x",
            "COVEY_SERVICE_DIR": tempfile.mkdtemp(prefix="cs-", dir="/tmp"),
            "RAY_TMPDIR": tempfile.mkdtemp(prefix="cb-", dir="/tmp"),
            "COVEY_MAX_CONCURRENT_AGENTS": "200"}


def _say_ok(env: dict[str, str], project: Path) -> dict[str, float]:
    started = time.monotonic()
    proc = subprocess.Popen([*_covey(), "-p", "say ok", "--output-format", "stream-json"], cwd=project, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    marks: dict[str, float] = {}
    for line in proc.stdout:
        kind = json.loads(line).get("type") if line.startswith("{") else None
        if kind and kind not in marks:
            marks[kind] = round(time.monotonic() - started, 3)
    stderr = proc.stderr.read()
    code = proc.wait()
    marks["exit"] = round(time.monotonic() - started, 3)
    if code != 0 or "assistant" not in marks:
        raise RuntimeError(f"covey -p 'say ok' exited {code}: {stderr[-800:]}")
    return marks


def _fanout(env: dict[str, str], project: Path, replies: Replies, kind: str, n: int,
            api: FakeMessagesAPI, command: list[str] | None = None) -> dict[str, Any]:
    """One fan-out through ``covey -p`` (or ``command``: Claude Code's CLI) and what it cost."""
    fanout = Fanout(n, background=kind == "background", delay_s=TURN_S, turns=TURNS)
    replies.fanout, replies.main_stamps, replies.stamps, replies.wall = fanout, [], [], {}
    sent_before = len(api.requests)
    started = time.monotonic()
    try:
        argv = [*(command or _covey()), "-p", f"{MAIN_MARK}: fan out", "--output-format", "json"]
        done = subprocess.run(argv + ([] if command else ["--quiet"]), cwd=project, env=env, capture_output=True,
                              text=True, timeout=900)
    finally:
        fanout.released.set()
        replies.fanout = None
    outcome = fanout.outcome()
    stamps = replies.main_stamps
    span = stamps[-1] - stamps[0] if len(stamps) > 1 else None
    return {
        "exit": done.returncode, "wall_s": round(time.monotonic() - started, 3),
        "first_to_last_request_s": round(span, 3) if span else None,
        "ratio_vs_ideal": round(span / IDEAL_S, 2) if span else None,
        "completed": sum(1 for i in range(n) if outcome.completed.get(i)),
        "lost": sum(1 for i in range(n) if i not in outcome.completed) - len(outcome.errors),
        "duplicated": sum(c - 1 for c in outcome.completed.values()), "failed": len(outcome.errors),
        "_bodies": [body for body in api.requests[sent_before:] if agent_of(body) != "other"],
        "timing": replies.timing(),
        "phases": _phases(env, replies.wall) if command is None else {},
        **({"stderr": done.stderr[-600:]} if done.returncode else {}),
    }


def _phases(env: dict[str, str], arrivals: dict[str, list[float]]) -> dict[str, Any]:
    """The launch and turn phases of the run just ended (``benchmarks.cli_phases``), from its
    session's transcripts (the newest session folder)."""
    folders = sorted(Path(env["HOME"], ".covey", "transcripts").glob("*/"), key=lambda p: p.stat().st_mtime)
    return phases(folders[-1], arrivals, TURN_S, MAIN_MARK) if folders else {}


def _floor(kind: str, n: int, bodies: list[dict[str, Any]], module: str = "benchmarks.floor",
           args: tuple[str, ...] = ()) -> dict[str, Any]:
    """The run's own request bodies replayed by a bare client against a fresh fake API serving the
    same fan-out (``benchmarks.floor``; ``benchmarks.floor_ray``: each child's from a Ray actor of
    its own): the main agent's first to last request, as covey's figure."""
    replies = Replies()
    replies.fanout = Fanout(n, background=kind == "background", delay_s=TURN_S, turns=TURNS)
    if keep := os.environ.get("COVEY_BENCH_KEEP_BODIES"):  # a folder: the replayed bodies, to look into
        Path(keep, f"{kind}_{n}.json").write_text(json.dumps(bodies))
    with FakeMessagesAPI(replies=[replies]) as api:
        replay_in_process(api.url, bodies, module=module, args=args)
    stamps = replies.main_stamps
    span = stamps[-1] - stamps[0] if len(stamps) > 1 else 0.0
    return {"requests": len(bodies), "first_to_last_request_s": round(span, 3), "ratio_vs_ideal": round(span / IDEAL_S, 2),
            "timing": replies.timing()}


def _settle(env: dict[str, str], timeout_s: float = 240.0) -> dict[str, Any]:
    """Wait until the pool holds what the last run asked for (it ramps while idle); how long."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        done = subprocess.run([*_covey(), "status", "--json"], env=env, capture_output=True, text=True, timeout=60)
        home = json.loads(done.stdout).get("pool", {}).get("home", {}) if done.returncode == 0 else {}
        if home and not home["starting"] and home["ready"] + home["lent"] >= home["target"]:
            return {"ramp_s": round(time.monotonic() - started, 1), "ready": home["ready"], "target": home["target"]}
        time.sleep(1.0)
    return {"ramp_s": None, "timed_out_after_s": timeout_s}


def _pool(env: dict[str, str]) -> dict[str, Any]:
    """The pool right after a run: how many agent processes the service has ever started
    (``created``) and the home lane's ready, starting and target: what the next run will meet."""
    done = subprocess.run([*_covey(), "status", "--json"], env=env, capture_output=True, text=True, timeout=60)
    pool = json.loads(done.stdout).get("pool", {}) if done.returncode == 0 else {}
    home = pool.get("home", {})
    return {"created": pool.get("created"), **{k: home.get(k) for k in ("ready", "lent", "starting", "target")}}


def _service_pids(env: dict[str, str]) -> list[int]:
    return processes_with(env["RAY_TMPDIR"])


BARE_RAY = ("import logging, time, ray; ray.init(include_dashboard=False, logging_level=logging.ERROR, "
            "log_to_driver=False); time.sleep(3600)")


def _bare_ray_idle(tmp: Path) -> dict[str, Any]:
    """The bound: an idle local Ray started the way the service starts one, with no actor."""
    env = {**os.environ, "RAY_TMPDIR": tempfile.mkdtemp(prefix="cr-", dir="/tmp")}
    proc = subprocess.Popen([sys.executable, "-c", BARE_RAY], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        time.sleep(15)  # started and settled
        return _idle(env)
    finally:
        proc.terminate()
        proc.wait(30)
        wait_gone(env["RAY_TMPDIR"], timeout_s=30)


def _idle(env: dict[str, str]) -> dict[str, Any]:
    """CPU (% of one core) and USS of every process of the service over ``IDLE_WINDOW_S``."""
    import psutil

    procs = []
    for pid in _service_pids(env):
        try:
            proc = psutil.Process(pid)
            procs.append((proc, proc.cpu_times()))
        except psutil.Error:
            pass
    time.sleep(IDLE_WINDOW_S)
    cpu_s, uss, agent_uss, titles = 0.0, 0.0, [], {}
    for proc, before in procs:
        try:
            after = proc.cpu_times()
            cpu_s += (after.user + after.system) - (before.user + before.system)
            mib = proc.memory_full_info().uss / 2**20
            title = (proc.cmdline() or [proc.name()])[0]
        except psutil.Error:
            continue
        uss += mib
        titles[title.split(" ")[0][:40]] = titles.get(title.split(" ")[0][:40], 0) + 1
        if title.startswith("ray::_AgentActor"):
            agent_uss.append(mib)
    return {"window_s": IDLE_WINDOW_S, "processes": len(procs), "cpu_pct_of_core": round(100 * cpu_s / IDLE_WINDOW_S, 2),
            "uss_mib": round(uss, 1), "agent_actor_uss_mib": round(statistics.median(agent_uss), 1) if agent_uss else None,
            "agent_actors": len(agent_uss), "by_title": titles}


async def _baseline(api_url: str, replies: Replies, n: int, tmp: Path) -> float:
    """N in-process AgentRunners on the child specs covey builds, against the same fake API
    serving the same children (three turns of ``TURN_S``), in a process of their own (as the
    service's agents are: the fake API's threads here would otherwise share their GIL)."""
    fanout = replies.fanout = Fanout(n, background=False, delay_s=TURN_S, turns=TURNS)
    try:
        done = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "benchmarks.cli_baseline", api_url, str(n), str(tmp)],
            capture_output=True, text=True, timeout=600, cwd=Path(__file__).resolve().parents[1])
    finally:
        fanout.released.set()
        replies.fanout = None
    if done.returncode != 0:
        raise RuntimeError(f"the in-process baseline failed: {done.stderr[-800:]}")
    if (ran := fanout.children_seen(TURNS)) != n:
        raise RuntimeError(f"the in-process baseline ran {ran} of {n} children to their last turn")
    return json.loads(done.stdout.strip().splitlines()[-1])["s"]


def _stop(env: dict[str, str]) -> dict[str, Any]:
    started = time.monotonic()
    done = subprocess.run([*_covey(), "stop"], env=env, capture_output=True, text=True, timeout=120)
    left = wait_gone(env["RAY_TMPDIR"], timeout_s=30)
    return {"exit": done.returncode, "s": round(time.monotonic() - started, 2), "processes_left": len(left),
            "said": done.stdout.strip()[-300:]}


def _fresh_service(env: dict[str, str], project: Path) -> dict[str, Any]:
    """``covey stop``, then the ``say ok`` that starts a service again: what a user's first fan-out meets."""
    stopped = _stop(env)
    return {"stop_s": stopped["s"], "say_ok_cold": _say_ok(env, project)}


async def _size(env: dict[str, str], project: Path, replies: Replies, kind: str, n: int, api: FakeMessagesAPI,
                tmp: Path, claude: str | None) -> dict[str, Any]:
    """One fan-out size three ways through covey, beside Claude Code, with the baselines."""
    key = f"{kind}_{n}"
    fresh = await asyncio.to_thread(_fresh_service, env, project)
    runs: dict[str, Any] = {"fresh_service": fresh}
    runs["first_on_fresh_service"] = await asyncio.to_thread(_fanout, env, project, replies, kind, n, api)
    runs["first_on_fresh_service"]["pool_after"] = await asyncio.to_thread(_pool, env)
    runs["back_to_back"] = await asyncio.to_thread(_fanout, env, project, replies, kind, n, api)
    runs["back_to_back"]["pool_after"] = await asyncio.to_thread(_pool, env)
    runs["pool_settle"] = await asyncio.to_thread(_settle, env)
    runs["settled"] = await asyncio.to_thread(_fanout, env, project, replies, kind, n, api)
    bodies = runs["settled"].pop("_bodies")
    for way in ("first_on_fresh_service", "back_to_back"):
        runs[way].pop("_bodies", None)
    runs["floor"] = await asyncio.to_thread(_floor, kind, n, bodies)
    runs["floor_ray"] = await asyncio.to_thread(_floor, kind, n, bodies, "benchmarks.floor_ray")
    runs["floor_ray_cold"] = await asyncio.to_thread(_floor, kind, n, bodies, "benchmarks.floor_ray", ("cold",))
    baseline = await _baseline(api.url, replies, n, tmp)
    runs["baseline_in_process_s"], runs["baseline_ratio_vs_ideal"] = round(baseline, 3), round(baseline / IDEAL_S, 2)
    floor_s = runs["floor"]["first_to_last_request_s"]
    runs["vs_floor"] = {way: ratio(runs[way].get("first_to_last_request_s"), floor_s) for way in WAYS}
    if claude and kind == "sync":
        peer = [await asyncio.to_thread(_fanout, peer_env(env), project, replies, kind, n, api, [claude])
                for _ in range(3)]
        for run in peer:
            run.pop("_bodies", None)
        runs["claude_code"] = peer
        theirs = statistics.median(r["first_to_last_request_s"] for r in peer if r.get("first_to_last_request_s"))
        runs["vs_claude_code"] = {way: ratio(runs[way].get("first_to_last_request_s"), theirs) for way in WAYS}
    log(f"cli: {key} " + ", ".join(f"{way} {runs[way].get('ratio_vs_ideal')}x" for way in WAYS)
        + f"; Claude Code {[r.get('ratio_vs_ideal') for r in runs.get('claude_code', [])]}x; covey / Claude Code "
        f"{runs.get('vs_claude_code')}; covey / floor {runs['vs_floor']} (floor {runs['floor']['ratio_vs_ideal']}x)")
    return runs


async def run(tmp: Path, quick: bool) -> dict[str, Any]:
    replies = Replies()
    project = tmp / "proj"
    project.mkdir()
    out: dict[str, Any] = {"turn_s": TURN_S, "turns": TURNS, "ideal_s": IDEAL_S, "goals": GOALS}
    with FakeMessagesAPI(replies=[replies]) as api:
        env = _env(tmp, api.url)
        try:
            out["say_ok_cold"] = await asyncio.to_thread(_say_ok, env, project)
            log(f"cli: cold say ok {out['say_ok_cold']}")
            warm = [await asyncio.to_thread(_say_ok, env, project) for _ in range(3 if quick else 5)]
            out["say_ok_warm"] = {"runs": warm, "first_answer_s_p50": statistics.median(r["assistant"] for r in warm),
                                  "exit_s_p50": statistics.median(r["exit"] for r in warm)}
            log(f"cli: warm say ok {out['say_ok_warm']['first_answer_s_p50']} s")
            await asyncio.sleep(5)  # the kit replaced after the last run is up
            out["idle"] = await asyncio.to_thread(_idle, env)
            log(f"cli: idle {out['idle']}")
            out["idle_bare_ray"] = await asyncio.to_thread(_bare_ray_idle, tmp)
            log(f"cli: an idle bare Ray {out['idle_bare_ray']}")
            status = subprocess.run([*_covey(), "status"], env=env, capture_output=True, text=True, timeout=60)
            out["status"] = status.stdout.strip()
            claude = bundled_claude()
            out["claude_code_version"] = claude_version(claude) if claude else None
            for kind, n in (QUICK_FANOUTS if quick else FANOUTS):
                out[f"{kind}_{n}"] = await _size(env, project, replies, kind, n, api, tmp, claude)
        finally:
            out["stop"] = await asyncio.to_thread(_stop, env)
            shutil.rmtree(env["COVEY_SERVICE_DIR"], ignore_errors=True)
    return out

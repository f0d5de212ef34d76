"""Faults: killed children, killed session actors and signals end in exact, clean outcomes."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from covey.cli import inspect
from covey.ray.local import NAMESPACE
from covey.session import Session
from tests.fake_messages_api import FakeMessagesAPI
from tests.faults.scenario import (
    MAIN_MARK, Fanout, covey_env, git_repo, processes_with, start_covey, titled, wait_for, wait_gone, worktrees,
)
from tests.service.served import SAY_OK

pytestmark = [pytest.mark.faults, pytest.mark.ray]


async def _kill(how: str, agent_id: str, session: Session) -> None:
    match how:
        case "ray.kill":
            (await session.runtime.registry.actor_of(agent_id)).kill()
        case "SIGKILL":
            actor = await session.runtime.registry.actor_of(agent_id)
            os.kill(await actor.pid(), signal.SIGKILL)
        case "covey kill":
            assert "killed" in await inspect.kill(agent_id)


async def test_a_seeded_random_thirty_percent_of_children_killed_each_notify_once_and_leave_nothing(
    ray_session, tmp_path, monkeypatch,
):
    repo = git_repo(tmp_path)
    fanout = Fanout(10, background=True, delay_s=0.2, turns=4, isolation="worktree", hold_turn=2)
    with FakeMessagesAPI(replies=[fanout]) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        session = Session(cwd=str(repo), pool_size=4, max_turns=30, transcript_dir=str(tmp_path / "t"))
        try:
            run = asyncio.create_task(session.run(f"{MAIN_MARK}: fan out"))
            try:
                await asyncio.to_thread(wait_for, lambda: fanout.children_seen(2) == 10, 120, "ten running children")
            except AssertionError as e:  # say where the run stood: which children asked, what the registry holds
                raise AssertionError(f"{e}; {await _where(session, fanout, run)}") from None
            children = sorted(r.agent_id for r in await session.runtime.registry.records() if r.role == "subagent")
            doomed = random.Random(11).sample(children, 3)
            for how, agent_id in zip(("ray.kill", "SIGKILL", "covey kill"), doomed):
                await _kill(how, agent_id, session)
            fanout.gate.set()  # the others go on
            result = await asyncio.wait_for(run, 180)  # nothing hangs
        finally:
            fanout.released.set()
            session.close()
    assert result.is_error is False
    outcome = fanout.outcome()
    assert sorted(outcome.notices) == children  # one notice per child, killed or not
    for agent_id, statuses in outcome.notices.items():
        if agent_id in doomed:
            assert len(statuses) == 1 and statuses[0] in ("failed", "killed"), (agent_id, statuses)
        else:
            assert statuses == ["completed"], (agent_id, statuses)
    assert sum(outcome.completed.values()) == 7 and set(outcome.completed.values()) == {1}
    assert worktrees(repo) == []  # the killed ones' too: the registry cleans a dead agent's worktree
    await asyncio.to_thread(wait_for, lambda: not _session_processes(session.session_id), 20, "agent processes to end")


async def _where(session: Session, fanout: Fanout, run: asyncio.Task) -> str:
    """A stalled fan-out's state, for the failure's message."""
    try:
        assert session.runtime is not None
        records = await asyncio.wait_for(session.runtime.registry.records(), 10)
        rows = [f"{r.agent_id} {r.role} {r.status}" + (f" waiting for {r.waiting_for}" if r.waiting_for else "")
                for r in records]
    except Exception as exc:  # the registry itself may be what stalled
        rows = [f"the registry did not answer: {type(exc).__name__}: {exc}"]
    ended = f"the run ended: {run.exception() if not run.cancelled() and run.exception() else run.result()}" \
        if run.done() else "the run is still going"
    return (f"requests per child {dict(sorted(fanout.child_requests.items()))}; main agent requests "
            f"{len(fanout.main_requests)}; {ended}; registry records: {rows}")


def _session_processes(session_id: str) -> list[int]:
    pids = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]
    return titled(pids, f"ray::covey:{session_id[:8]}:") + titled(pids, "ray::agent:")


@pytest.mark.parametrize("actor", ["registry"])
def test_a_session_actor_killed_mid_run_ends_the_run_with_an_error_naming_it(tmp_path, actor):
    """In-process (``--no-service``): what a broken run must leave is nothing at all (its
    private Ray included), which a served run cannot show; the served variant below
    kills either actor. The mailbox is the same path here (``Session._watched``)."""
    fanout = Fanout(3, background=True, delay_s=0.5, turns=40)
    with FakeMessagesAPI(replies=[fanout]) as api:
        env = covey_env(tmp_path, api.url)
        proc = start_covey(["-p", f"{MAIN_MARK}: fan out", "--output-format", "json", "--quiet"], tmp_path, env)
        try:
            wait_for(lambda: fanout.children_seen(2) == 3, 120, "three running children", proc)
            title = {"registry": "ray::_RegistryActor", "mailbox": "ray::_MailboxActor"}[actor]
            (pid,) = titled(processes_with(env["RAY_TMPDIR"]), title)
            os.kill(pid, signal.SIGKILL)
            killed_at = time.monotonic()
            out, err = proc.communicate(timeout=60)
            print(f"the run ended {time.monotonic() - killed_at:.1f} s after its {actor} was killed")
        finally:
            fanout.released.set()
            if proc.poll() is None:
                proc.kill()
            left = wait_gone(env["RAY_TMPDIR"])
    assert proc.returncode != 0
    result = json.loads(out)
    assert result["is_error"] is True and f"covey's {actor} actor died" in result["result"], result
    assert f"{actor} actor died" in err
    assert left == []  # every agent stopped, Ray stopped: nothing of the run is left


ACTOR_PID = """
import os, sys, ray
from covey.ray.cluster import join
join(sys.argv[1], namespace=sys.argv[2], log_to_driver=False, logging_level="ERROR")  # sends the auth token
session_id, role = sys.argv[3], sys.argv[4]
for entry in ray.util.list_named_actors(all_namespaces=True):
    name, namespace = entry["name"], entry["namespace"]
    if name.endswith(":registry"):
        registry = ray.get_actor(name, namespace=namespace)
        serving, mailbox = ray.get(registry.session.remote())
        print(namespace, name, serving, file=sys.stderr)
        if serving == session_id:
            actor = registry if role == "registry" else mailbox.actor
            print(ray.get(actor.__ray_call__.remote(lambda self: os.getpid())))
"""


def served_actor_pid(served, ray_address: str, session_id: str, role: str) -> int:
    """The pid of the registry or mailbox of the service's kit that serves ``session_id``
    (asked from a driver of its own: a kit is named by itself, not by the session)."""
    for _ in range(5):  # Ray's list of named actors was seen to miss a live one for a moment
        done = subprocess.run([sys.executable, "-c", ACTOR_PID, ray_address, NAMESPACE, session_id, role],
                              env=served.env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        if done.stdout.strip():
            return int(done.stdout.strip().splitlines()[-1])
        time.sleep(1)
    raise AssertionError(f"no registry serves session {session_id}: {done.stderr[-2000:]}")


@pytest.mark.parametrize("actor", ["mailbox"])  # a killed registry comes back: tests/faults/test_durable.py
def test_a_served_session_actor_killed_mid_run_ends_that_run_with_an_error_and_the_service_serves_on(
    served, tmp_path, actor,
):
    fanout = Fanout(3, background=True, delay_s=0.5, turns=40)
    pid = served.pid()
    with FakeMessagesAPI(replies=[fanout]) as api:
        proc = served.start("-p", f"{MAIN_MARK}: fan out", "--output-format", "json", "--quiet",
                            env={"ANTHROPIC_BASE_URL": api.url}, cwd=tmp_path)
        try:
            wait_for(lambda: fanout.children_seen(2) == 3, 120, "three running children", proc)
            status = served.status()
            # This run's session (a session an earlier test left may still be ending).
            mine = [entry for entry in status["sessions"] if entry["cwd"] == str(tmp_path)]
            assert len(mine) == 1, status["sessions"]
            (session,) = mine
            # The session's own kit, not the ready one the pool keeps for the next session.
            victim = served_actor_pid(served, status["ray_address"], session["session_id"], actor)
            assert victim in processes_with(str(served.base))
            os.kill(victim, signal.SIGKILL)
            out, err = proc.communicate(timeout=60)
        finally:
            fanout.released.set()
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode != 0
        result = json.loads(out)
        assert result["is_error"] is True and f"covey's {actor} actor died" in result["result"], result
        assert f"{actor} actor died" in err
        # The service lives on: that session's agents are stopped and given back, and it serves the next run.
        serves_on(served, pid)


def test_a_signal_stops_every_child_with_its_cleanup_and_reports_kept_worktrees(tmp_path):
    """In-process (``--no-service``), SIGTERM: what the run must leave is nothing at all, its private
    Ray included. SIGINT takes the same path there (``cli_local._interruptible``); through the
    service it is the client's, below."""
    signum = signal.SIGTERM
    repo = git_repo(tmp_path)
    fanout = Fanout(2, background=True, delay_s=0.3, turns=200, write={0}, isolation="worktree")
    with FakeMessagesAPI(replies=[fanout]) as api:
        env = covey_env(tmp_path, api.url)
        args = ["-p", f"{MAIN_MARK}: fan out", "--permission-mode", "acceptEdits", "--quiet"]
        proc = start_covey(args, repo, env)
        try:
            wait_for(lambda: fanout.children_seen(3) == 2, 120, "two children past their first turns", proc)
            proc.send_signal(signum)
            out, err = proc.communicate(timeout=60)
        finally:
            fanout.released.set()
            if proc.poll() is None:
                proc.kill()
            left = wait_gone(env["RAY_TMPDIR"])
    assert proc.returncode == 128 + signum, err[-2000:]
    kept = worktrees(repo)
    assert len(kept) == 1 and (Path(kept[0]) / "made-by-0.txt").exists()  # the unchanged one was removed
    assert f"kept worktree {kept[0]}" in err
    assert left == []  # Ray and every agent process are gone


def test_ctrl_c_on_a_served_run_stops_its_children_with_their_cleanup_and_the_service_serves_on(served, tmp_path):
    """Through the service (a user's default path): the client turns SIGINT into an interrupt of
    its session only; the children stop with their cleanup, the kept worktree is reported, every
    agent goes back to the service, which serves the next run."""
    repo = git_repo(tmp_path)
    fanout = Fanout(2, background=True, delay_s=0.3, turns=200, write={0}, isolation="worktree")
    pid = served.pid()
    with FakeMessagesAPI(replies=[fanout]) as api:
        proc = served.start("-p", f"{MAIN_MARK}: fan out", "--permission-mode", "acceptEdits", "--quiet",
                            env={"ANTHROPIC_BASE_URL": api.url}, cwd=repo)
        try:
            wait_for(lambda: fanout.children_seen(3) == 2, 120, "two children past their first turns", proc)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            fanout.released.set()
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 128 + signal.SIGINT, err[-2000:]
        kept = worktrees(repo)
        assert len(kept) == 1 and (Path(kept[0]) / "made-by-0.txt").exists()  # the unchanged one was removed
        assert f"kept worktree {kept[0]}" in err
        serves_on(served, pid)


def serves_on(served, pid: int) -> None:
    """The same service (``pid``) has every agent back and serves the next run."""
    status = served.wait_all_given_back()
    assert status["pid"] == pid and served.pid() == pid
    again = served.covey("-p", "say ok", "--model", served.rules(SAY_OK), "--quiet")
    assert (again.returncode, again.stdout) == (0, "ok\n"), again.stderr

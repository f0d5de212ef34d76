"""Sessions that outlive their processes: a detached run, a service killed mid-run, ``covey attach``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from covey.client import ports as protocol
from tests.fake_messages_api import FakeMessagesAPI
from tests.faults.scenario import COVEY, MAIN_MARK, Fanout, wait_for
from tests.faults.test_kills import served_actor_pid, serves_on
from tests.service.served import served_service

pytestmark = [pytest.mark.faults, pytest.mark.ray]


def _events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def _notices(events: list[dict]) -> list[str]:
    return [e["task_id"] for e in events if e.get("type") == "system" and e.get("subtype") == "task_notification"]


def test_a_detached_run_survives_its_service_killed_and_attach_shows_every_notice_once_and_the_result():
    fanout = Fanout(20, background=True, delay_s=1.0, turns=3)
    with FakeMessagesAPI(replies=[fanout]) as api, served_service(start=True, ANTHROPIC_BASE_URL=api.url,
                                                                   ANTHROPIC_API_KEY="x") as served:
        started = served.covey("-p", f"{MAIN_MARK}: twenty background reviews", "--detach",
                               "--output-format", "stream-json", "--max-turns", "30", timeout=120)
        assert started.returncode == 0, started.stderr
        session_id = started.stdout.strip()
        assert len(session_id) == 36, started.stdout
        wait_for(lambda: fanout.children_seen(1) == 20, 120, "twenty running children")
        old = served.pid()
        os.kill(old, signal.SIGKILL)
        wait_for(lambda: served.covey("start", timeout=120).returncode == 0, 120, "a new service")
        listed = served.covey("sessions", "--json", timeout=120)
        assert listed.returncode == 0, listed.stderr
        entry = next(s for s in json.loads(listed.stdout) if s["session_id"] == session_id)
        assert entry["status"] in ("running", "finished"), entry
        assert served.pid() != old
        attached = served.covey("attach", session_id, timeout=240)
        fanout.released.set()
    assert attached.returncode == 0, attached.stderr
    events = _events(attached.stdout)  # the run's own format: stream-json
    notices = _notices(events)
    assert len(notices) == 20 and len(set(notices)) == 20, notices
    assert events[-1]["type"] == "result" and events[-1]["subtype"] == "success", events[-1]
    uuids = [e["uuid"] for e in events if "uuid" in e]
    assert len(uuids) == len(set(uuids))  # nothing twice
    outcome = fanout.outcome()
    assert sorted(outcome.completed) == list(range(20)) and set(outcome.completed.values()) == {1}


def test_sessions_lists_a_detached_run_while_it_goes_and_after_it_ends_and_attach_replays_it():
    fanout = Fanout(2, background=True, delay_s=0.5, turns=2)
    with FakeMessagesAPI(replies=[fanout]) as api, served_service(start=True, ANTHROPIC_BASE_URL=api.url,
                                                                   ANTHROPIC_API_KEY="x") as served:
        started = served.covey("-p", f"{MAIN_MARK}: two reviews", "--detach", timeout=120)
        assert started.returncode == 0, started.stderr
        session_id = started.stdout.strip()

        def state() -> dict:
            listed = served.covey("sessions", "--json")
            return next(s for s in json.loads(listed.stdout) if s["session_id"] == session_id)

        running = state()
        assert running["status"] == "running" and running["detached"] is True, running
        assert "agents_running" in running and "cost_usd" in running, running
        wait_for(lambda: state()["status"] == "finished", 120, "the detached run to finish")
        text = served.covey("sessions")
        assert session_id in text.stdout and "finished" in text.stdout, text.stdout
        time.sleep(0.5)
        replayed = served.covey("attach", session_id)  # its host is reset: read from its journal file
        again = served.covey("attach", session_id, "--output-format", "json")
        whole = _events(served.covey("attach", session_id, "--output-format", "stream-json").stdout)
        middle = whole[len(whole) // 2]["uuid"]
        rest = _events(served.covey("attach", session_id, "--output-format", "stream-json", "--after", middle).stdout)
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.strip() == "noted", replayed.stdout  # text: the run's final answer
    assert json.loads(again.stdout)["session_id"] == session_id
    assert rest == whole[len(whole) // 2 + 1:]  # a reader that left off there gets only what it has not


def test_a_registry_killed_mid_run_comes_back_from_its_journal_and_the_run_ends_with_every_result_once(
    served, tmp_path,
):
    fanout = Fanout(6, background=True, delay_s=0.5, turns=6)
    pid = served.pid()
    with FakeMessagesAPI(replies=[fanout]) as api:
        proc = served.start("-p", f"{MAIN_MARK}: fan out", "--output-format", "stream-json", "--verbose", "--quiet",
                            env={"ANTHROPIC_BASE_URL": api.url}, cwd=tmp_path)
        try:
            wait_for(lambda: fanout.children_seen(2) == 6, 120, "six running children", proc)
            _kill_registry(served, tmp_path)
            out, err = proc.communicate(timeout=180)
        finally:
            fanout.released.set()
            if proc.poll() is None:
                proc.kill()
    events = _every_result_once(proc.returncode, out, err, fanout, 6)
    assert events[-1]["type"] == "result" and events[-1]["subtype"] == "success", events[-1]
    assert all(statuses == ["completed"] for statuses in fanout.outcome().notices.values()), fanout.outcome().notices
    serves_on(served, pid)


def _every_result_once(returncode: int, out: str, err: str, fanout: Fanout, children: int) -> list[dict]:
    """The run's events, once it is checked to have ended well with one notice for each child,
    each child having completed once."""
    assert returncode == 0, err[-3000:]
    events = _events(out)
    notices = _notices(events)
    assert sorted(notices) == sorted(set(notices)) and len(notices) == children, notices
    outcome = fanout.outcome()
    assert sorted(outcome.completed) == list(range(children)) and set(outcome.completed.values()) == {1}
    return events


def _kill_registry(served, cwd) -> None:
    """SIGKILL the registry actor of the one session running in ``cwd``."""
    status = served.status()
    (session,) = [entry for entry in status["sessions"] if entry["cwd"] == str(cwd)]
    os.kill(served_actor_pid(served, status["ray_address"], session["session_id"], "registry"), signal.SIGKILL)


def test_launches_waiting_in_the_queue_when_the_registry_is_killed_start_once_it_is_back(served, tmp_path):
    fanout = Fanout(4, background=True, delay_s=0.2, turns=3, hold_turn=2)
    with FakeMessagesAPI(replies=[fanout]) as api:
        env = {"ANTHROPIC_BASE_URL": api.url, "COVEY_QUEUE_SPAWNS": "1", "COVEY_MAX_CONCURRENT_AGENTS": "2"}
        proc = served.start("-p", f"{MAIN_MARK}: fan out", "--output-format", "stream-json", "--verbose", "--quiet",
                            env=env, cwd=tmp_path)
        try:
            wait_for(lambda: fanout.children_seen(2) == 2, 120, "two running children, held mid-run", proc)
            assert fanout.children_seen(1) == 2  # the other two wait in the registry's queue
            _kill_registry(served, tmp_path)
            fanout.gate.set()
            out, err = proc.communicate(timeout=180)
        finally:
            fanout.released.set()
            if proc.poll() is None:
                proc.kill()
    _every_result_once(proc.returncode, out, err, fanout, 4)


def test_a_detached_run_of_fifty_children_with_no_client_is_all_there_when_attached_afterwards():
    fanout = Fanout(50, background=True, delay_s=0.2, turns=1)
    with FakeMessagesAPI(replies=[fanout]) as api, served_service(start=True, ANTHROPIC_BASE_URL=api.url,
                                                                   ANTHROPIC_API_KEY="x") as served:
        started = served.covey("-p", f"{MAIN_MARK}: fifty reviews", "--detach", "--output-format", "stream-json",
                               "--max-turns", "80", timeout=120)
        assert started.returncode == 0, started.stderr
        session_id = started.stdout.strip()

        def status() -> str:
            listed = json.loads(served.covey("sessions", "--json").stdout)
            return next(s for s in listed if s["session_id"] == session_id)["status"]

        wait_for(lambda: status() != "running", 400, "the detached run of fifty to end")
        assert status() == "finished"
        attached = served.covey("attach", session_id, timeout=120)
    assert attached.returncode == 0, attached.stderr
    events = _events(attached.stdout)
    notices = _notices(events)
    assert len(notices) == 50 and len(set(notices)) == 50
    assert events[-1]["type"] == "result" and events[-1]["subtype"] == "success", events[-1]
    assert sorted(fanout.outcome().completed) == list(range(50))


class _MakesAFile:
    """The main agent asks to run a Bash command that needs permission in default mode; once it has
    the command's result it answers with it."""

    def __call__(self, body: dict) -> dict:
        results = [block for message in body["messages"] if isinstance(message["content"], list)
                   for block in message["content"] if block.get("type") == "tool_result"]
        if results:
            return {"text": f"done: error={results[-1].get('is_error', False)}"}
        return {"content": [{"type": "tool_use", "id": "toolu_bash_1", "name": "Bash",
                             "input": {"command": "touch made-by-agent.txt", "description": "make a file"}}]}


def test_a_detached_runs_permission_prompt_waits_is_listed_and_an_attached_client_answers_it(served, tmp_path):
    with FakeMessagesAPI(replies=[_MakesAFile()]) as api:
        env = {"ANTHROPIC_BASE_URL": api.url}
        started = served.covey("-p", "make a file", "--detach", "--output-format", "stream-json",
                               env=env, cwd=tmp_path)
        assert started.returncode == 0, started.stderr
        session_id = started.stdout.strip()

        def entry() -> dict:
            listed = served.covey("sessions", "--json")
            return next(s for s in json.loads(listed.stdout) if s["session_id"] == session_id)

        wait_for(lambda: entry().get("questions") == 1, 120, "the run's permission prompt to wait")
        (waiting,) = entry()["waiting"]
        assert waiting["tool_name"] == "Bash" and "touch made-by-agent.txt" in json.dumps(waiting["input"])
        assert "waiting for a client" in served.covey("sessions").stdout
        # A reader with no terminal leaves the prompt open (it does not deny it), and Ctrl-C detaches it.
        log = tmp_path / "reader.err"
        with log.open("w") as err:
            reader = subprocess.Popen([*COVEY, "attach", session_id], cwd=tmp_path, env=served.env,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, text=True,
                                      start_new_session=True)
            try:
                wait_for(lambda: "waits for an answer" in log.read_text(), 60, "the reader to see the prompt")
                reader.send_signal(signal.SIGINT)
                assert reader.wait(timeout=60) == 0, log.read_text()
            finally:
                if reader.poll() is None:
                    reader.kill()
        assert entry()["questions"] == 1 and not (tmp_path / "made-by-agent.txt").exists()
        answer = protocol.success(waiting["request_id"], {"behavior": "allow", "updatedInput": waiting["input"]})
        attached = subprocess.run([*COVEY, "attach", session_id, "--permission-prompt-tool", "stdio"], cwd=tmp_path,
                                  env=served.env, input=json.dumps(answer) + "\n", capture_output=True, text=True,
                                  timeout=180)
        final = entry()
    assert attached.returncode == 0, attached.stderr
    events = _events(attached.stdout)
    asked = [e for e in events if e["type"] == "control_request"]
    assert [e["request_id"] for e in asked] == [waiting["request_id"]]
    assert events[-1]["type"] == "result" and events[-1]["result"] == "done: error=False", events[-1]
    assert (tmp_path / "made-by-agent.txt").exists()
    assert final["status"] == "finished" and final.get("questions", 0) == 0, final
    # A later reader is not asked again: the answered prompt is left out of the replay.
    again = _events(served.covey("attach", session_id, "--output-format", "stream-json").stdout)
    assert not [e for e in again if e["type"] == "control_request"] and again[-1]["type"] == "result"


SUBMIT = ("import asyncio, sys, covey\n"
          "session = covey.Session(cwd=sys.argv[1], detach=True, max_turns=30)\n"
          "print(asyncio.run(session.submit(sys.argv[2])), flush=True)\n")
FOLLOW = ("import json, sys, covey\n"
          "for event in covey.attach(sys.argv[1], after=sys.argv[2] if len(sys.argv) > 2 else None):\n"
          "    print(json.dumps(event), flush=True)\n")


def test_a_python_programs_detached_run_outlives_it_and_covey_attach_follows_it_from_python(served, tmp_path):
    fanout = Fanout(2, background=True, delay_s=0.2, turns=2, hold_turn=1)
    with FakeMessagesAPI(replies=[fanout]) as api:
        env = {**served.env, "ANTHROPIC_BASE_URL": api.url}

        def python(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([sys.executable, "-c", *args], env=env, cwd=tmp_path, capture_output=True,
                                  text=True, timeout=180)

        started = python(SUBMIT, str(tmp_path), f"{MAIN_MARK}: two reviews")
        assert started.returncode == 0, started.stderr
        session_id = started.stdout.strip()
        wait_for(lambda: fanout.children_seen(1) == 2, 120, "the run's children, after its program ended")
        listed = json.loads(served.covey("sessions", "--json").stdout)
        entry = next(s for s in listed if s["session_id"] == session_id)
        assert entry["status"] == "running" and entry["detached"] is True, entry  # it outlived its program
        fanout.gate.set()
        followed = python(FOLLOW, session_id)
        printed = served.covey("attach", session_id, "--output-format", "stream-json")
        events = [json.loads(line) for line in followed.stdout.splitlines()]
        middle = events[len(events) // 2]["uuid"]
        rest = python(FOLLOW, session_id, middle)
    assert followed.returncode == 0, followed.stderr
    assert events == _events(printed.stdout)  # what `covey attach` prints, event for event
    assert events[-1]["type"] == "result" and events[-1]["subtype"] == "success", events[-1]
    assert len(_notices(events)) == 2
    assert [json.loads(line) for line in rest.stdout.splitlines()] == events[len(events) // 2 + 1:]

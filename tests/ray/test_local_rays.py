"""The files that tell ``covey ps`` which Rays covey started, and how it picks its targets (no Ray needed)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys

import pytest
import ray

from covey.cli import inspect
from covey.errors import AgentUnavailable, UserError
from covey.ray import local as local_rays


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("RAY_ADDRESS", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # as in a fresh `covey ps`
    return tmp_path


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_record_is_private_names_the_token_and_is_forgotten(home):
    (home / ".ray").mkdir()
    (home / ".ray" / "auth_token").write_text("secret")
    path = local_rays.record("127.0.0.1:6379", "/tmp/ray/session_x")
    assert path == home / ".covey" / "run" / f"ray-{os.getpid()}.json"
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    [entry] = local_rays.live()
    assert (entry.gcs_address, entry.session_dir, entry.pid) == ("127.0.0.1:6379", "/tmp/ray/session_x", os.getpid())
    assert entry.token_path == str(home / ".ray" / "auth_token")
    assert "secret" not in path.read_text()
    local_rays.forget()
    assert not path.exists() and local_rays.live() == []


def test_files_of_dead_drivers_or_reused_pids_are_ignored_and_removed(home):
    local_rays.record("127.0.0.1:1111", "/tmp/s")
    mine = local_rays.run_dir() / f"ray-{os.getpid()}.json"
    entry = json.loads(mine.read_text())
    dead = local_rays.run_dir() / "ray-dead.json"
    dead.write_text(json.dumps({**entry, "pid": _dead_pid(), "gcs_address": "127.0.0.1:2222"}))
    reused = local_rays.run_dir() / "ray-reused.json"
    reused.write_text(json.dumps({**entry, "pid_started": "1", "gcs_address": "127.0.0.1:3333"}))
    assert [e.gcs_address for e in local_rays.live()] == ["127.0.0.1:1111"]
    assert not dead.exists() and not reused.exists() and mine.exists()
    local_rays.forget()


def test_a_record_that_does_not_read_is_kept_and_passed_over(home, caplog):
    local_rays.record("127.0.0.1:1111", "/tmp/s")
    entry = json.loads((local_rays.run_dir() / f"ray-{os.getpid()}.json").read_text())
    folder = local_rays.run_dir()
    unreadable = {
        "ray-half.json": "{",  # half written
        "ray-list.json": "[]",
        "ray-newer.json": json.dumps({"version": 2, "ray": {"pid": _dead_pid()}}),  # another shape
        "ray-typed.json": json.dumps({**entry, "pid": str(_dead_pid())}),
    }
    for name, text in unreadable.items():
        (folder / name).write_text(text)
    extra = folder / "ray-extra.json"  # a newer covey's added key: still read, and dead, so removed
    extra.write_text(json.dumps({**entry, "pid": _dead_pid(), "gcs_address": "127.0.0.1:2222", "added": 1}))
    assert [e.gcs_address for e in local_rays.live()] == ["127.0.0.1:1111"]
    assert all((folder / name).exists() for name in unreadable) and not extra.exists()
    assert "ray-newer.json does not read as a covey Ray record" in caplog.text
    local_rays.forget()


def test_inspection_targets_covey_rays_only_or_the_named_one(home, monkeypatch):
    with pytest.raises(UserError, match="no covey run is active"):
        inspect.targets(None)
    local_rays.record("127.0.0.1:1111", "/tmp/s")
    [target] = inspect.targets(None)
    assert target.address == "127.0.0.1:1111" and target.local.pid == os.getpid()
    assert f"covey pid {os.getpid()}" in target.label()
    assert inspect.targets("10.0.0.5:6379") == [inspect.Target("10.0.0.5:6379")]
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:7777")
    assert inspect.targets(None) == [inspect.Target("127.0.0.1:7777")]
    local_rays.forget()


def test_a_record_has_no_token_path_when_the_token_came_in_the_environment(home, monkeypatch):
    monkeypatch.setenv("RAY_AUTH_TOKEN", "secret")
    local_rays.record("127.0.0.1:1111", "/tmp/s")
    [entry] = local_rays.live()
    assert dataclasses.asdict(entry)["token_path"] is None
    assert "secret" not in (local_rays.run_dir() / f"ray-{os.getpid()}.json").read_text()
    local_rays.forget()


@pytest.fixture
def two_covey_rays(home, monkeypatch):
    """Two recorded covey Rays; joining one makes its sessions visible (no real Ray)."""
    local_rays.record("127.0.0.1:1111", "/tmp/a")
    first = local_rays.run_dir() / f"ray-{os.getpid()}.json"
    (local_rays.run_dir() / "ray-other.json").write_text(
        json.dumps({**json.loads(first.read_text()), "gcs_address": "127.0.0.1:2222"}))
    on_ray = {"127.0.0.1:1111": {"aaaa1111": "registry-a"}, "127.0.0.1:2222": {"bbbb2222": "registry-b"}}
    current = {"broken": False}

    @contextlib.contextmanager
    def joined(target):
        if target.address == "127.0.0.1:2222" and current["broken"]:
            raise UserError(f"cannot join {target.label()}: refused")
        current["sessions"] = on_ray[target.address]
        yield

    async def ps_text():
        return "\n".join(f"session {prefix}" for prefix in current["sessions"])

    monkeypatch.setattr(inspect, "joined", joined)
    monkeypatch.setattr(inspect, "ps_text", ps_text)
    async def running_sessions():
        return current["sessions"]

    monkeypatch.setattr(inspect, "running_sessions", running_sessions)
    yield current
    local_rays.forget()


def test_ps_lists_every_covey_ray_under_its_address_and_goes_on_past_a_broken_one(two_covey_rays):
    listing = inspect.ps(None)
    assert "ray 127.0.0.1:1111" in listing and "  session aaaa1111" in listing
    assert "ray 127.0.0.1:2222" in listing and "  session bbbb2222" in listing
    two_covey_rays["broken"] = True
    listing = inspect.ps(None)
    assert "  session aaaa1111" in listing and "cannot join ray 127.0.0.1:2222" in listing


async def _show(prefix, registry):
    return f"{prefix} via {registry}"


def test_a_session_is_found_on_whichever_covey_ray_runs_it(two_covey_rays):
    assert inspect.in_session(None, "bbbb2222-rest-of-id", _show) == "bbbb2222 via registry-b"
    with pytest.raises(UserError, match=r"several sessions are running \(aaaa1111, bbbb2222\); name one"):
        inspect.in_session(None, None, _show)
    with pytest.raises(UserError, match="no running session 'cccc'"):
        inspect.in_session(None, "cccc", _show)


class _Registry:
    def __init__(self, session_id, records, name="covey:kit-abc123:registry", gone=False):
        self._session_id, self._records, self.name, self.gone = session_id, records, name, gone

    async def records(self):
        if self.gone:
            raise AgentUnavailable(f"actor {self.name!r} is gone: The actor died unexpectedly")
        return self._records

    async def session(self):
        return self._session_id, None


def test_sessions_are_named_by_their_registrys_session_and_idle_kits_are_skipped(monkeypatch):
    """A covey service's kit serves one session after another under its own actor name: a
    session is listed by the id its registry serves now, and a kit waiting for the next
    session (no record yet) is not listed at all."""
    from types import SimpleNamespace

    record = SimpleNamespace(agent_id="agent-1", agent_type="main", status="running", description="the run", rate_wait=None,
                             live=True, cost_usd=0.0, summary=None, waiting_for=None)
    own = _Registry("fresh000-z", [], name="covey:fresh000:registry")  # a session's own, started, no agent yet
    # A kit the service let go (or a session that ended) between the listing and the question: not running.
    gone = _Registry("gone0000-w", [record], name="covey:kit-dead00:registry", gone=True)
    monkeypatch.setattr(inspect, "registries",
                        lambda: [_Registry("idle0000-x", []), gone, _Registry("used0000-y", [record]), own])
    listing = inspect.run(inspect.ps_text())
    assert "session used0000" in listing and "idle0000" not in listing and "session fresh000: 0 agents" in listing
    assert "gone0000" not in listing
    assert list(inspect.run(inspect.running_sessions())) == ["used0000", "fresh000"]


def test_a_process_s_start_stamp_is_stable_while_it_lives_and_none_once_it_is_gone():
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        stamp = local_rays.started_at(sleeper.pid)
        assert stamp is not None and stamp == local_rays.started_at(sleeper.pid)
        assert stamp != local_rays.started_at(1) or sleeper.pid == 1
    finally:
        sleeper.kill()
        sleeper.wait()
    assert local_rays.started_at(sleeper.pid) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the clock ticks of /proc/PID/stat")
def test_on_linux_the_stamp_is_the_one_earlier_coveys_recorded():
    """Clock ticks from boot (field 22 of /proc/PID/stat): records written before keep naming their driver."""
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        with open(f"/proc/{sleeper.pid}/stat") as stat:
            ticks = stat.read().rsplit(")", 1)[1].split()[19]
        assert local_rays.started_at(sleeper.pid) == ticks
    finally:
        sleeper.kill()
        sleeper.wait()

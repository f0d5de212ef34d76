"""``covey start --dashboard``: the service's own Ray with Ray's dashboard on 127.0.0.1, or one
clear line saying why not; and the line that lets Ray's own CLI reach the service's Ray. The ``ray
start`` command is checked, not run; no Ray starts here."""

from __future__ import annotations

import subprocess

import pytest

from covey.cli import service_commands as commands
from covey.client import process as lifecycle
from covey.client.paths import service_paths
from covey.ray import own_ray


class _Started:
    def __init__(self, command: list[str], **_: object) -> None:
        self.command, self.pid = command, 0


def _launched(monkeypatch, dashboard: bool) -> tuple[list[str], own_ray.OwnRay]:
    started: list[_Started] = []
    monkeypatch.setattr(subprocess, "Popen", lambda command, **kw: started.append(_Started(command)) or started[-1])
    launched = own_ray.launch(service_paths(), dashboard=dashboard)
    return started[0].command, launched.own


def test_the_dashboard_is_asked_for_on_loopback_at_a_port_of_its_own(service_root, monkeypatch):
    command, own = _launched(monkeypatch, dashboard=True)
    assert "--include-dashboard=true" in command and "--include-dashboard=false" not in command
    assert command[command.index("--dashboard-host") + 1] == "127.0.0.1"
    port = command[command.index("--dashboard-port") + 1]
    assert own.dashboard == f"http://127.0.0.1:{port}"
    gcs_port = command[command.index("--port") + 1]
    assert port != gcs_port and port not in [command[i + 1] for i, part in enumerate(command)
                                             if part in own_ray.AGENT_PORT_FLAGS]


def test_without_the_option_no_dashboard_starts(service_root, monkeypatch):
    command, own = _launched(monkeypatch, dashboard=False)
    assert "--include-dashboard=false" in command and own.dashboard is None
    # Ray's API server runs all the same: on loopback, at a port of its own (not Ray's default 8265,
    # which another user's Ray may hold)
    assert command[command.index("--dashboard-host") + 1] == "127.0.0.1"
    assert command[command.index("--dashboard-port") + 1] != "8265"


def test_a_ray_json_of_an_older_covey_still_reads(service_root):
    paths = service_paths()
    paths.root.mkdir(parents=True, exist_ok=True)
    own_ray.ray_file(paths).write_text('{"pid": 1, "pid_started": null, "address": "127.0.0.1:1"}')
    assert own_ray.find(paths) is None  # nothing answers there, but the file parsed (no TypeError)


def test_a_missing_dashboard_dependency_is_named_with_what_to_install(monkeypatch):
    real = own_ray.importlib.util.find_spec
    monkeypatch.setattr(own_ray.importlib.util, "find_spec", lambda name: None if name == "aiohttp_cors" else real(name))
    why = own_ray.dashboard_missing()
    assert why is not None and "aiohttp_cors" in why and "pip install 'ray[default]==" in why and "\n" not in why


def test_start_dashboard_without_ray_default_starts_nothing_and_says_why(service_root, monkeypatch, capsys):
    monkeypatch.setattr(own_ray, "dashboard_missing", lambda: "Ray's dashboard needs `ray[default]`")
    monkeypatch.setattr(lifecycle, "spawn", lambda *a, **k: pytest.fail("a service was started"))
    assert commands.start_command(None, None, dashboard=True) == 1
    err = capsys.readouterr().err
    assert err == "covey: Ray's dashboard needs `ray[default]`\n"


def test_start_dashboard_on_a_named_cluster_is_refused_in_one_line(service_root, monkeypatch, capsys):
    monkeypatch.setattr(lifecycle, "spawn", lambda *a, **k: pytest.fail("a service was started"))
    assert commands.start_command("127.0.0.1:6379", None, dashboard=True) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--include-dashboard=true" in err


def test_the_dashboard_flag_reaches_the_service_process(service_root, monkeypatch):
    spawned: list[list[str]] = []

    class _Popen:
        def __init__(self, command: list[str], **_: object) -> None:
            spawned.append(command)

    monkeypatch.setattr(lifecycle.subprocess, "Popen", _Popen)
    lifecycle.spawn(service_paths(), address=None, idle_timeout_s=None, dashboard=True)
    lifecycle.spawn(service_paths(), address=None, idle_timeout_s=None)
    assert spawned[0][-1] == "--dashboard" and "--dashboard" not in spawned[1]
    from covey.service.__main__ import _parser

    assert _parser().parse_args(["--dashboard"]).dashboard and not _parser().parse_args([]).dashboard


def test_a_running_service_without_a_dashboard_says_how_to_get_one(service_root, monkeypatch, capsys):
    monkeypatch.setattr(own_ray, "dashboard_missing", lambda: None)
    monkeypatch.setattr(commands, "ensure_service", lambda paths, **kw: ({"pid": 7, "ray_address": "127.0.0.1:1"}, False))
    assert commands.start_command(None, None, dashboard=True) == 1
    assert "`covey stop`, then `covey start --dashboard`" in capsys.readouterr().err


def test_start_and_status_show_the_dashboard(service_root, monkeypatch, capsys):
    monkeypatch.setattr(own_ray, "dashboard_missing", lambda: None)
    answer = {"pid": 7, "ray_address": "127.0.0.1:1", "dashboard": "http://127.0.0.1:2"}
    monkeypatch.setattr(commands, "ensure_service", lambda paths, **kw: (answer, True))
    assert commands.start_command(None, None, dashboard=True) == 0
    assert "Ray dashboard http://127.0.0.1:2" in capsys.readouterr().out
    status = {"pid": 7, "uptime_s": 1, "ray_address": "127.0.0.1:1", "started_ray": True, "idle_s": 0,
              "idle_timeout_s": 600, "dashboard": "http://127.0.0.1:2"}
    assert "  dashboard http://127.0.0.1:2" in commands.status_text(status)
    assert "dashboard" not in commands.status_text({**status, "dashboard": None})


def test_the_export_line_gives_rays_cli_the_address_the_token_mode_and_loopback(monkeypatch):
    """Ray 2.60's CLI sends the token only with RAY_AUTH_MODE=token, and keeps 127.0.0.1 only with
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 (else it asks the network address, where the Ray is not)."""
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    assert commands.ray_cli_exports("127.0.0.1:6380") == (
        "export RAY_ADDRESS=127.0.0.1:6380 RAY_AUTH_MODE=token RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0")
    assert commands.ray_cli_exports("10.0.0.5:6379") == "export RAY_ADDRESS=10.0.0.5:6379 RAY_AUTH_MODE=token"
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # a Ray the user started without token auth
    assert "RAY_AUTH_MODE" not in commands.ray_cli_exports("127.0.0.1:6380")

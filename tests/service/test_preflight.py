"""A cold run hears what its own files and environment refuse before a service or Ray starts."""

from __future__ import annotations

import json
import os

import pytest

from covey.errors import UserError
from covey.service.preflight import MissingKey, check_run

SCRIPTED = "scripted:covey/cli/scenarios/ok.yaml"


def test_a_run_on_the_api_without_a_key_is_refused(tmp_path):
    with pytest.raises(MissingKey, match="no Anthropic API key"):
        check_run({"cwd": str(tmp_path)}, {"HOME": str(tmp_path)})
    with pytest.raises(MissingKey):
        check_run({"cwd": str(tmp_path), "model": "haiku"}, {"HOME": str(tmp_path)})


@pytest.mark.parametrize("env", [{"ANTHROPIC_API_KEY": "sk-x"}, {"ANTHROPIC_AUTH_TOKEN": "t"}])
def test_a_key_in_the_environment_passes(tmp_path, env):
    check_run({"cwd": str(tmp_path)}, {"HOME": str(tmp_path), **env})


def test_the_scripted_model_needs_no_key_from_the_flag_or_the_settings(tmp_path):
    check_run({"cwd": str(tmp_path), "model": SCRIPTED}, {"HOME": str(tmp_path)})
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"model": SCRIPTED}))
    check_run({"cwd": str(tmp_path)}, {"HOME": str(tmp_path)})


def test_a_settings_file_that_does_not_parse_is_named(tmp_path):
    (tmp_path / ".claude").mkdir()
    bad = tmp_path / ".claude" / "settings.local.json"
    bad.write_text("{not json")
    with pytest.raises(UserError, match=f"settings file '{bad}' is not valid JSON"):
        check_run({"cwd": str(tmp_path), "model": SCRIPTED}, {"HOME": str(tmp_path)})


def test_a_settings_file_that_is_not_read_passes_unread(tmp_path):
    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".claude").mkdir(parents=True)
    home.mkdir()
    (project / ".claude" / "settings.json").write_text("{not json")
    check_run({"cwd": str(project), "model": SCRIPTED, "setting_sources": ["user"]}, {"HOME": str(home)})


def test_the_cli_refuses_a_keyless_run_before_starting_a_service(service_root, tmp_path, monkeypatch, capsys):
    from covey.cli import main as cli
    from covey.client import process as lifecycle

    monkeypatch.setattr(lifecycle, "spawn", lambda *a, **k: pytest.fail("a service was started"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", open(os.devnull))
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert cli.main(["-p", "say ok"]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [err.strip()] and "no Anthropic API key" in err

"""Issue 23's "done means": a fresh clone whose ``.claude/settings.json`` says ``defaultMode:
bypassPermissions``: ``covey -p`` does not run in bypass, and says why on stderr."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import covey as covey_package

from tests.cli.test_cli import covey
from tests.inprocess_covey import covey_here

_TOUCH_THEN_REPORT = """\
    rules:
      - when: {last_tool_result_contains: "was denied"}
        reply: {text: "the touch was denied"}
      - reply:
          tool_use: {name: Bash, input: {command: "touch pwned.txt"}}
    """


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_a_cloned_projects_bypass_setting_does_not_switch_off_permission_checks(tmp_path):
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"defaultMode": "bypassPermissions"}}))
    (tmp_path / "rules.yaml").write_text(textwrap.dedent(_TOUCH_THEN_REPORT))
    done = covey_here("-p", "go", "--model", f"scripted:{tmp_path / 'rules.yaml'}", "--max-turns", "3",
                      "--output-format", "stream-json", "--verbose", cwd=tmp_path, managed=tmp_path / "no-managed")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["permissionMode"] == "default"
    assert events[-1]["result"] == "the touch was denied" and not (tmp_path / "pwned.txt").exists()
    warning = next(line for line in done.stderr.splitlines() if "defaultMode" in line)
    assert str(settings.resolve()) in warning and "--permission-mode bypassPermissions" in warning


OK = f"scripted:{Path(covey_package.__file__).parent / 'cli' / 'scenarios' / 'ok.yaml'}"


def test_managed_disable_refuses_the_bypass_flag_before_anything_starts(tmp_path):
    managed = tmp_path / "managed"
    managed.mkdir()
    (managed / "managed-settings.json").write_text(json.dumps({"permissions": {"disableBypassPermissionsMode": "disable"}}))
    done = covey("-p", "go", "--model", OK, "--dangerously-skip-permissions",
                 cwd=tmp_path, managed=managed, timeout=60)
    assert done.returncode != 0 and done.stdout == ""
    assert f"{managed / 'managed-settings.json'} disables" in done.stderr and "disableBypassPermissionsMode" in done.stderr
    assert covey("-p", "go", "--model", OK, "--dangerously-skip-permissions",
                 cwd=tmp_path, env={"COVEY_MANAGED_SETTINGS_DIR": str(tmp_path / "elsewhere")}, timeout=60,
                 managed=managed).returncode != 0  # the old variable's empty folder does not replace the managed one

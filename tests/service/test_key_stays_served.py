"""Through a real covey service whose first client had the API key in its environment: a model's
Bash command that walks its ancestors and every process of the service (psutil) finds the key
in none of them, the service's own included (it zeroes it in its /proc environ block)."""

from __future__ import annotations

import json

import pytest

from tests.service.served import served_service
from tests.test_key_stays_e2e import KEY, _model

pytestmark = pytest.mark.ray


def test_a_command_run_through_the_service_finds_no_key_in_any_covey_process(tmp_path):
    with served_service() as served:
        model = _model(tmp_path, str(served.base))
        done = served.covey("-p", "go", "--model", f"scripted:{model}", "--allowed-tools", "Bash",
                            "--output-format", "json", env={"ANTHROPIC_API_KEY": KEY}, timeout=150)
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout)["result"] == "all done"
        dump = (tmp_path / "dump.txt").read_text()
    assert "covey.service" in dump and "raylet" in dump  # the service and its Ray were read
    assert dump.count("## covey process") >= 4
    assert KEY not in dump

import os

import psutil
import pytest

from covey.tools.base import ToolContext


@pytest.fixture
def ctx(tmp_path):
    return ToolContext(agent_id="agent-test", cwd=tmp_path)


def live_members(pgid: int) -> list[psutil.Process]:
    """Processes still running in group ``pgid`` (zombies waiting for a reaper don't count)."""
    members = []
    for proc in psutil.process_iter(["status"]):
        try:
            if os.getpgid(proc.pid) == pgid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                members.append(proc)
        except (ProcessLookupError, psutil.Error):
            continue
    return members

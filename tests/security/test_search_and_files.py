"""Read deny rules reach search results; protected and denied files stay out of reach of every tool."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from covey.tools.base import ToolContext, ToolServices
from covey.tools.glob import Glob
from covey.tools.grep import Grep
from tests.security._policies import policy, project


@pytest.fixture
def place(tmp_path):
    root, home = project(tmp_path)
    (root / "secrets").mkdir()
    (root / "secrets" / "key.txt").write_text("SECRET=3\n")
    return root, home


def _ctx(root, p):
    return ToolContext(agent_id="a", cwd=root, services=ToolServices(spec=SimpleNamespace(permissions=p)))


@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
async def test_grep_over_the_folder_never_shows_a_read_denied_file(place, mode):
    root, home = place
    p = policy(root, home, deny=["Read(./.env)", "Read(./secrets/**)"])
    tool = Grep(use_ripgrep=False)
    result = await tool.run(tool.input_model.model_validate({"pattern": "SECRET|print", "output_mode": mode}), _ctx(root, p))
    assert "SECRET=" not in result.content and ".env" not in result.content and "key.txt" not in result.content
    assert "app.py" in result.content


async def test_grep_without_deny_rules_finds_the_same_files(place):
    root, home = place
    tool = Grep(use_ripgrep=False)
    result = await tool.run(tool.input_model.model_validate({"pattern": "SECRET"}), _ctx(root, policy(root, home)))
    assert ".env" in result.content and "key.txt" in result.content


async def test_glob_leaves_out_read_denied_files(place):
    root, home = place
    p = policy(root, home, deny=["Read(./.env)", "Read(./secrets/**)"])
    tool = Glob()
    result = await tool.run(tool.input_model.model_validate({"pattern": "**/*", "path": str(root)}), _ctx(root, p))
    assert "app.py" in result.content
    assert "key.txt" not in result.content


def test_notebook_edit_of_a_read_denied_path_is_denied(place):
    root, home = place
    p = policy(root, home, "bypassPermissions", deny=["Read(./.env)"])
    assert p.decide("NotebookEdit", False, str(root / ".env"), {}).behavior == "deny"

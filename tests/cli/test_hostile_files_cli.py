"""Issue 39 item 6 through the ``covey`` command: a cloned project's hostile agent files are one
line each and the rest loads; a hostile settings file is one stderr line before anything starts.
No traceback either way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import covey as covey_package
from tests.cli.test_cli import covey
from tests.inprocess_covey import covey_here
from tests.common.test_safe_yaml import BOMB

OK = f"scripted:{Path(covey_package.__file__).parent / 'cli' / 'scenarios' / 'ok.yaml'}"


def _hostile_project(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    agents = project / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "good.md").write_text("---\nname: good\ndescription: A good agent\n---\nHelp.\n")
    (agents / "bomb.md").write_text(f"---\nname: bomb\ndescription: d\n{BOMB}---\nb\n")
    return project, agents


def test_covey_agents_lists_each_hostile_file_in_one_line_and_loads_the_rest(tmp_path):
    project, agents = _hostile_project(tmp_path)
    os.mkfifo(agents / "pipe.md")
    (agents / "zero.md").symlink_to("/dev/zero")
    (agents / "latin1.md").write_bytes(b"---\nname: latin\ndescription: caf\xe9\n---\n")
    (agents / "typed.md").write_text("---\nname: typed\ndescription: d\ntools: 5\n---\nb\n")
    done = covey("agents", cwd=project, env={"HOME": str(tmp_path / "home")}, timeout=60, managed=tmp_path / "none")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    errors = done.stdout.split("definition error(s):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert sorted(errors) == sorted([
        f"  {agents / 'bomb.md'}: frontmatter: the YAML expands to more than 100,000 elements once its aliases "
        "(*name) are repeated; refused (an alias bomb?)",
        f"  {agents / 'latin1.md'}: cannot read: not UTF-8 text (byte 0xe9 at offset 32)",
        f"  {agents / 'pipe.md'}: cannot read: a FIFO (named pipe), not a regular file",
        f"  {agents / 'typed.md'}: tools: Input should be a valid list",
        f"  {agents / 'zero.md'}: cannot read: a character device, not a regular file",
    ])
    assert any(line.split()[:1] == ["good"] for line in done.stdout.splitlines())


@pytest.mark.parametrize("make", [os.mkfifo, lambda path: path.write_text('{"permissions": []}'),
                                  lambda path: path.write_text("[" * 100_000)], ids=["fifo", "wrong-type", "deep"])
def test_a_hostile_settings_file_is_one_stderr_line_before_anything_starts(tmp_path, make):
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    make(settings)
    done = covey("-p", "go", "--model", OK, cwd=tmp_path, env={"HOME": str(tmp_path / "home")}, timeout=60,
                 managed=tmp_path / "none")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"covey: settings file {str(settings)!r}")
    assert "Traceback" not in done.stderr


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_a_run_beside_a_hostile_agent_file_warns_in_one_line_and_answers(tmp_path):
    project, agents = _hostile_project(tmp_path)
    os.mkfifo(agents / "pipe.md")
    done = covey_here("-p", "go", "--model", OK, cwd=project, managed=tmp_path / "none")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if str(agents) in line]
    assert len(lines) == 2 and "Traceback" not in done.stderr, done.stderr
    assert any(f"{agents / 'bomb.md'}: frontmatter: " in line and "alias bomb" in line for line in lines)
    assert any(f"{agents / 'pipe.md'}: cannot read: a FIFO" in line for line in lines)

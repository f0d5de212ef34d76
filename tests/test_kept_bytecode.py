"""Where the person set ``PYTHONDONTWRITEBYTECODE``, the processes covey starts for Ray keep
compiled modules in ``~/.covey/pycache`` (never beside the sources), and the commands a run
starts get the person's own setting back."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from covey.common.subprocess_env import KEPT_BYTECODE, bytecode_kept, scrubbed, with_kept_bytecode


def _env(home: Path, **extra: str) -> dict[str, str]:
    base = {name: value for name, value in os.environ.items()
            if name not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", KEPT_BYTECODE)}
    return {**base, "HOME": str(home), **extra}


def test_a_process_covey_starts_keeps_compiled_modules_in_covey_s_folder_not_beside_the_sources(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "mod.py").write_text("VALUE = 1\n")
    env = with_kept_bytecode(_env(tmp_path / "home", PYTHONDONTWRITEBYTECODE="1"))
    assert "PYTHONDONTWRITEBYTECODE" not in env
    cache = tmp_path / "home" / ".covey" / "pycache"
    assert env["PYTHONPYCACHEPREFIX"] == str(cache) and stat.S_IMODE(cache.stat().st_mode) == 0o700
    subprocess.run([sys.executable, "-c", "import mod"], cwd=source, env=env, check=True)
    assert list(cache.rglob("mod.*.pyc")) and not (source / "__pycache__").exists()


def test_without_the_setting_or_with_a_prefix_of_the_person_s_own_nothing_changes(tmp_path):
    plain = _env(tmp_path)
    assert with_kept_bytecode(plain) == plain
    own = _env(tmp_path, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX="/elsewhere")
    assert with_kept_bytecode(own) == own
    assert not (tmp_path / ".covey").exists()


def test_a_command_a_run_starts_gets_the_person_s_own_setting_back(tmp_path):
    env = with_kept_bytecode(_env(tmp_path, PYTHONDONTWRITEBYTECODE="1"))
    child = scrubbed(env)
    assert child["PYTHONDONTWRITEBYTECODE"] == "1"
    assert "PYTHONPYCACHEPREFIX" not in child and KEPT_BYTECODE not in child
    moved = {**env, "PYTHONPYCACHEPREFIX": "/the/person/changed/it"}  # theirs, once they set it
    assert scrubbed(moved)["PYTHONPYCACHEPREFIX"] == "/the/person/changed/it"


def test_ray_init_meanwhile_sees_the_kept_setting_and_the_process_gets_its_own_back(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    with bytecode_kept():
        assert "PYTHONDONTWRITEBYTECODE" not in os.environ
        assert os.environ["PYTHONPYCACHEPREFIX"] == str(tmp_path / ".covey" / "pycache")
    assert os.environ["PYTHONDONTWRITEBYTECODE"] == "1"
    assert "PYTHONPYCACHEPREFIX" not in os.environ and KEPT_BYTECODE not in os.environ

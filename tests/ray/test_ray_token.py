"""Ray's auth token around a local Ray covey starts (covey/ray/token.py): written 0600 in a
0700 ``~/.ray`` before the start, tightened to 0600 after it; a user's own token left alone.
A temporary HOME, no Ray started."""

from __future__ import annotations

import os
import stat

import pytest

from covey.ray import token as ray_token


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    return tmp_path


def test_the_token_ray_would_generate_is_written_0600_in_a_0700_folder(home):
    path = ray_token.prepare_token()
    assert path == home / ".ray" / "auth_token"
    assert mode(path) == 0o600 and mode(home / ".ray") == 0o700
    assert len(path.read_text()) == 64 and int(path.read_text(), 16) >= 0  # 256 random bits, as Ray's


def test_with_the_mode_unset_a_ray_that_turns_tokens_on_by_default_gets_one_too(home, monkeypatch):
    monkeypatch.delenv("RAY_AUTH_MODE")
    assert ray_token.prepare_token() == home / ".ray" / "auth_token"  # Ray 2.60 (installed) turns it on


def test_an_existing_token_and_folder_are_kept(home):
    (home / ".ray").mkdir(mode=0o755)
    os.chmod(home / ".ray", 0o755)
    (home / ".ray" / "auth_token").write_text("theirs")
    assert ray_token.prepare_token() is None
    assert (home / ".ray" / "auth_token").read_text() == "theirs" and mode(home / ".ray") == 0o755


@pytest.mark.parametrize("env", [{"RAY_AUTH_MODE": "disabled"}, {"RAY_AUTH_TOKEN": "t"},
                                 {"RAY_AUTH_TOKEN_PATH": "/elsewhere/token"}])
def test_nothing_is_written_when_ray_would_not_write_a_token(home, monkeypatch, env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert ray_token.prepare_token() is None and not (home / ".ray").exists()


def test_a_world_readable_token_is_tightened_after_the_start(home):
    (home / ".ray").mkdir()
    token = home / ".ray" / "auth_token"
    token.write_text("secret")
    os.chmod(token, 0o644)  # as Ray 2.60 writes it
    assert ray_token.tighten_token() is True
    assert mode(token) == 0o600 and token.read_text() == "secret"
    assert ray_token.tighten_token() is False  # already private


def test_a_symlinked_or_missing_token_is_left_alone(home, tmp_path):
    assert ray_token.tighten_token() is False
    (home / ".ray").mkdir()
    elsewhere = tmp_path / "shared-token"
    elsewhere.write_text("team")
    os.chmod(elsewhere, 0o640)
    (home / ".ray" / "auth_token").symlink_to(elsewhere)
    assert ray_token.tighten_token() is False and mode(elsewhere) == 0o640

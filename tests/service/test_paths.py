"""The service directory is private to the user, or refused."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from covey.client.paths import SOCKET_PATH_MAX, ServiceDirError, service_dir, service_paths


def test_the_directory_is_created_0700_with_its_files_named(tmp_path, monkeypatch):
    monkeypatch.setenv("COVEY_SERVICE_DIR", str(tmp_path / "a" / "svc"))
    paths = service_paths()
    assert stat.S_IMODE(os.stat(paths.root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(tmp_path / "a").st_mode) == 0o700  # the parent covey made too
    assert [p.name for p in (paths.socket, paths.info, paths.lock, paths.start_lock, paths.log)] == [
        "service.sock", "service.json", "service.lock", "start.lock", "service.log"]


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o775, 0o777])
def test_a_directory_others_can_write_in_is_refused(tmp_path, monkeypatch, mode):
    root = tmp_path / "svc"
    root.mkdir()
    root.chmod(mode)
    monkeypatch.setenv("COVEY_SERVICE_DIR", str(root))
    with pytest.raises(ServiceDirError, match="written by group or others.*chmod 700"):
        service_paths()
    assert stat.S_IMODE(os.stat(root).st_mode) == mode  # refused, not repaired: it may hold planted files


@pytest.mark.parametrize("mode", [0o750, 0o705, 0o755])
def test_a_directory_others_can_only_enter_or_read_is_tightened(tmp_path, monkeypatch, mode):
    root = tmp_path / "svc"
    root.mkdir()
    root.chmod(mode)
    monkeypatch.setenv("COVEY_SERVICE_DIR", str(root))
    service_paths()
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700


@pytest.mark.skipif(os.getuid() != 0, reason="giving a directory to another user needs root")
def test_the_tmp_fallback_made_first_by_someone_else_is_refused(tmp_path, monkeypatch):
    """The fallback's name is predictable: a folder another uid made there is never used."""
    monkeypatch.setenv("HOME", str(tmp_path / ("h" * SOCKET_PATH_MAX)))
    monkeypatch.delenv("COVEY_SERVICE_DIR", raising=False)
    fallback = service_dir()
    fallback.mkdir(mode=0o700)
    try:
        os.chown(fallback, 4242, -1)
        with pytest.raises(ServiceDirError, match="belongs to uid 4242"):
            service_paths()
    finally:
        fallback.rmdir()


def test_a_symlink_is_refused(tmp_path, monkeypatch):
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.setenv("COVEY_SERVICE_DIR", str(tmp_path / "link"))
    with pytest.raises(ServiceDirError, match="symlink"):
        service_paths()


@pytest.mark.skipif(os.getuid() != 0, reason="giving a directory to another user needs root")
def test_someone_elses_directory_is_refused(tmp_path, monkeypatch):
    root = tmp_path / "svc"
    root.mkdir(mode=0o700)
    os.chown(root, 4242, -1)
    monkeypatch.setenv("COVEY_SERVICE_DIR", str(root))
    with pytest.raises(ServiceDirError, match="uid 4242"):
        service_paths()


def test_the_default_is_under_home_and_a_long_home_falls_back_to_tmp(tmp_path, monkeypatch):
    monkeypatch.delenv("COVEY_SERVICE_DIR", raising=False)
    short = Path(tempfile.mkdtemp(prefix="ch-", dir="/tmp"))  # pytest's tmp_path may itself be too long
    try:
        monkeypatch.setenv("HOME", str(short))
        assert service_dir() == short / ".covey" / "service"
    finally:
        short.rmdir()
    long_home = tmp_path / ("h" * SOCKET_PATH_MAX)
    monkeypatch.setenv("HOME", str(long_home))
    fallback = service_dir()
    assert fallback.parent == Path("/tmp") and fallback.name.startswith(f"covey-service-{os.getuid()}-")
    assert len(os.fsencode(fallback / "service.sock")) < SOCKET_PATH_MAX
    monkeypatch.setenv("HOME", str(long_home) + "2")
    assert service_dir() != fallback  # one per home


def test_a_service_json_that_is_not_an_object_reads_as_none_and_is_kept(service_root):
    from covey.client.paths import service_paths
    from covey.client.process import read_info

    paths = service_paths()
    paths.info.parent.mkdir(parents=True, exist_ok=True)
    for text in ("[1, 2]", "{", '"newer"'):
        paths.info.write_text(text)
        assert read_info(paths) is None and paths.info.read_text() == text

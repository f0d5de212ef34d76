"""Private folders and files (covey/common/private_dirs.py): made 0700 / 0600, and a folder that is
not this user's own, a symlink, or writable by others is refused (no Ray)."""

from __future__ import annotations

import os
import stat
import tempfile

import pytest

from covey.common.private_dirs import PrivateDirError, make_dirs, open_private, private_dir, user_temp_dir


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_new_folder_and_its_missing_parents_are_0700(tmp_path):
    made = private_dir(tmp_path / "a" / "b" / "c")
    assert [mode(p) for p in (tmp_path / "a", tmp_path / "a" / "b", made)] == [0o700, 0o700, 0o700]


def test_make_dirs_leaves_existing_folders_as_they_are(tmp_path):
    (tmp_path / "shared").mkdir(mode=0o775)
    os.chmod(tmp_path / "shared", 0o775)
    make_dirs(tmp_path / "shared" / "mine")
    assert mode(tmp_path / "shared") == 0o775 and mode(tmp_path / "shared" / "mine") == 0o700


@pytest.mark.parametrize("loose", [0o755, 0o750, 0o705, 0o711])
def test_an_own_folder_others_may_only_read_or_enter_is_tightened(tmp_path, loose):
    folder = tmp_path / "old"
    folder.mkdir()
    os.chmod(folder, loose)
    private_dir(folder)
    assert mode(folder) == 0o700


@pytest.mark.parametrize("loose", [0o770, 0o707, 0o775, 0o777, 0o1777])
def test_a_folder_others_may_write_in_is_refused_and_left_alone(tmp_path, loose):
    folder = tmp_path / "planted"
    folder.mkdir()
    os.chmod(folder, loose)
    with pytest.raises(PrivateDirError, match=f"written by group or others \\(mode {loose:o}\\)"):
        private_dir(folder, "test folder")
    assert mode(folder) == loose


def test_a_symlink_is_refused_even_to_a_private_folder(tmp_path):
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(PrivateDirError, match="is a symlink"):
        private_dir(tmp_path / "link")


def test_a_file_where_the_folder_should_be_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(PrivateDirError, match="not a directory"):
        private_dir(tmp_path / "f")


def test_someone_elses_folder_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    owner = os.lstat(folder).st_uid
    monkeypatch.setattr(os, "getuid", lambda: owner + 4242)  # this process is now another user
    with pytest.raises(PrivateDirError, match=f"belongs to uid {owner}, not to you"):
        private_dir(folder)


def test_the_errors_pickle_as_every_covey_error_does():
    error = PrivateDirError("covey folder '/tmp/x' is a symlink")
    assert str(type(error)(*error.args)) == str(error)


def test_the_user_temp_folder_is_per_uid_and_private(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = user_temp_dir()
    assert folder == tmp_path / f"covey-{os.getuid()}" and mode(folder) == 0o700


def test_a_user_temp_folder_made_first_by_someone_else_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    squatted = tmp_path / f"covey-{os.getuid()}"
    squatted.mkdir()
    os.chmod(squatted, 0o777)  # what another user would leave for this one to write in
    with pytest.raises(PrivateDirError, match="covey's temporary folder"):
        user_temp_dir()


def test_open_private_makes_a_0600_file_and_tightens_an_open_one(tmp_path):
    os.close(open_private(tmp_path / "new", os.O_WRONLY))
    assert mode(tmp_path / "new") == 0o600
    (tmp_path / "old").write_text("kept")
    os.chmod(tmp_path / "old", 0o644)
    os.close(open_private(tmp_path / "old", os.O_WRONLY | os.O_APPEND))
    assert mode(tmp_path / "old") == 0o600 and (tmp_path / "old").read_text() == "kept"

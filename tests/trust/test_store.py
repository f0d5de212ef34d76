"""The person's trust records: kept outside every repository, covering the folders below, Claude
Code's own records counted, and a bad record file granting nothing."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from covey.errors import UserError
from covey.trust import ALL, TrustStore


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "work" / "project"
    (folder / "src" / "deep").mkdir(parents=True)
    return folder


def test_nothing_is_trusted_until_the_person_says_so(home, project):
    assert TrustStore(home).trusted_by(project) is None and TrustStore(home).folders() == []


def test_trusting_a_folder_covers_it_and_every_folder_below(home, project):
    store = TrustStore(home)
    store.trust(project)
    assert store.trusted_by(project) and store.trusted_by(project / "src" / "deep")
    assert store.trusted_by(project.parent) is None and store.folders() == [str(project.resolve())]


def test_a_sibling_with_the_same_prefix_is_not_covered(home, project):
    TrustStore(home).trust(project)
    sibling = project.parent / (project.name + "-evil")
    sibling.mkdir()
    assert TrustStore(home).trusted_by(sibling) is None


def test_the_record_is_kept_in_the_home_private_to_the_person(home, project):
    TrustStore(home).trust(project)
    record = home / ".covey" / "trust.json"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert stat.S_IMODE(record.parent.stat().st_mode) == 0o700
    assert str(project.resolve()) in json.loads(record.read_text())["folders"]


def test_a_link_to_a_trusted_folder_is_the_folder_and_a_link_into_it_from_outside_too(home, project, tmp_path):
    TrustStore(home).trust(project)
    link = tmp_path / "link"
    link.symlink_to(project)
    assert TrustStore(home).trusted_by(link)


def test_trusting_a_link_trusts_where_it_points_not_the_link(home, project, tmp_path):
    link = tmp_path / "alias"
    link.symlink_to(project)
    TrustStore(home).trust(link)
    assert TrustStore(home).folders() == [str(project.resolve())]


def test_revoking_forgets_the_folder_and_its_approvals(home, project):
    store = TrustStore(home)
    store.trust(project)
    store.approve(project, ["db"])
    assert store.revoke(project) is True
    assert store.trusted_by(project) is None and store.approved(project) == set()
    assert store.revoke(project) is False


def test_a_missing_folder_cannot_be_trusted(home, tmp_path):
    with pytest.raises(UserError, match="is not a folder"):
        TrustStore(home).trust(tmp_path / "nowhere")


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"folders": []}', '{"folders": {"/": true}}',
                                  '{"folders": {"/": {"trusted": "yes"}}}', "[" * 100_000, "\udcff"])
def test_a_bad_record_file_trusts_nothing_and_is_rewritten_cleanly(home, project, text):
    record = home / ".covey" / "trust.json"
    record.parent.mkdir(mode=0o700)
    record.write_text(text, errors="surrogateescape")
    store = TrustStore(home)
    assert store.trusted_by(project) is None and store.trusted_by(Path("/")) is None
    store.trust(project)
    assert store.trusted_by(project)


def test_an_oversized_record_file_is_not_read(home, project):
    record = home / ".covey" / "trust.json"
    record.parent.mkdir(mode=0o700)
    entry = json.dumps({"folders": {str(project.resolve()): {"trusted": True}}, "pad": "x" * (5 << 20)})
    record.write_text(entry)
    assert TrustStore(home).trusted_by(project) is None


def test_a_fifo_as_the_record_file_is_never_opened(home, project):
    record = home / ".covey" / "trust.json"
    record.parent.mkdir(mode=0o700)
    os.mkfifo(record)
    assert TrustStore(home).trusted_by(project) is None


def test_claude_codes_accepted_trust_dialog_counts(home, project):
    (home / ".claude.json").write_text(json.dumps({"projects": {str(project.resolve()): {"hasTrustDialogAccepted": True}}}))
    assert "Claude Code" in TrustStore(home).trusted_by(project / "src")


@pytest.mark.parametrize("value", [False, "true", 1, None])
def test_only_an_accepted_dialog_counts_in_claude_codes_record(home, project, value):
    (home / ".claude.json").write_text(json.dumps({"projects": {str(project.resolve()): {"hasTrustDialogAccepted": value}}}))
    assert TrustStore(home).trusted_by(project) is None


@pytest.mark.parametrize("projects", [[], "x", {"p": "not an object"}, None])
def test_a_strange_claude_json_trusts_nothing(home, project, projects):
    (home / ".claude.json").write_text(json.dumps({"projects": projects}))
    assert TrustStore(home).trusted_by(project) is None and TrustStore(home).approved(project) == set()


def test_approvals_are_per_folder_and_merge_with_claude_codes(home, project, tmp_path):
    store = TrustStore(home)
    store.approve(project, ["db", "search"])
    store.approve(project, ["db"])
    (home / ".claude.json").write_text(json.dumps({"projects": {str(project.resolve()): {
        "enabledMcpjsonServers": ["git"]}}}))
    assert store.approved(project) == {"db", "search", "git"}
    assert store.approved(tmp_path) == set() and store.approved(project / "src") == set()


def test_claude_codes_enable_all_is_an_approval_of_every_server(home, project):
    (home / ".claude.json").write_text(json.dumps({"projects": {str(project.resolve()): {
        "enableAllProjectMcpServers": True}}}))
    assert ALL in TrustStore(home).approved(project)


def test_unapproving_withdraws_only_what_was_approved_here(home, project):
    store = TrustStore(home)
    store.approve(project, ["db", "search"])
    assert store.unapprove(project, ["db", "other"]) == ["db"]
    assert store.approved(project) == {"search"}
    assert store.unapprove(project, [ALL]) == ["search"] and store.approved(project) == set()


def test_approving_does_not_trust(home, project):
    store = TrustStore(home)
    store.approve(project, ["db"])
    assert store.trusted_by(project) is None and store.folders() == []

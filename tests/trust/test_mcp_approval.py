"""A project's ``.mcp.json`` servers start only in a trusted folder and only once the person
approved them outside the repository; a config naming a credential covey keeps never loads; and
``covey trust`` / ``covey mcp approve`` are how the person says so."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from covey.cli import main as cli
from covey.mcp.approval import CREDENTIALS, Approval, credential_named
from covey.mcp.sources import session_servers
from covey.trust import ALL, Trust, TrustStore
from tests.mcp.helpers import SERVER


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "db": {"command": "db-server"}, "search": {"command": "search-server"}}}))
    return home, project.resolve()


@pytest.mark.parametrize("approval, loaded", [
    (dict(trusted=True), set()),
    (dict(trusted=True, approved=frozenset({"db"})), {"db"}),
    (dict(trusted=True, approved=frozenset({ALL})), {"db", "search"}),
    (dict(trusted=True, approved=frozenset({ALL}), disabled=frozenset({"db"})), {"search"}),
    (dict(trusted=True, approved=frozenset({"db"}), disabled=frozenset({"db"})), set()),
    (dict(trusted=False, approved=frozenset({ALL})), set()),
    (dict(trusted=False), set()),
])
def test_which_project_servers_load(dirs, approval, loaded):
    home, project = dirs
    found = session_servers(project, home=home, env={}, approval=Approval(project, **approval))
    assert set(found.servers) == loaded


def test_servers_waiting_for_approval_are_one_warning_saying_how(dirs):
    home, project = dirs
    found = session_servers(project, home=home, env={}, approval=Approval(project, approved=frozenset({"db"})))
    assert len(found.warnings) == 1 and "not approved" in found.warnings[0]
    assert f"`covey mcp approve search` (in {project})" in found.warnings[0]


def test_an_untrusted_folders_servers_are_set_aside_in_one_entry(dirs):
    home, project = dirs
    found = session_servers(project, home=home, env={}, approval=Approval(project, trusted=False))
    assert found.warnings == [] and found.set_aside.found == {str(project / ".mcp.json"): ["MCP servers (db, search)"]}


def test_no_approval_given_means_none_approved(dirs):
    home, project = dirs
    assert session_servers(project, home=home, env={}).servers == {}


def test_the_persons_own_servers_need_no_approval(dirs):
    home, project = dirs
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"mine": {"command": "m"}}, "projects": {
        str(project): {"mcpServers": {"local": {"command": "l"}}}}}))
    found = session_servers(project, home=home, env={}, approval=Approval(project, trusted=False),
                            given=[{"given": {"command": "g"}}])
    assert set(found.servers) == {"mine", "local", "given"}


@pytest.mark.parametrize("name", sorted(CREDENTIALS))
@pytest.mark.parametrize("field", ["url", "headers", "env", "args", "command"])
def test_a_project_config_naming_a_credential_never_loads(dirs, name, field):
    home, project = dirs
    body = {"type": "http", "url": "http://127.0.0.1:1/mcp"} if field in ("url", "headers") else {"command": "srv"}
    reference = "${" + name + "}"
    body[field] = {"url": f"http://127.0.0.1:1/{reference}", "headers": {"X": reference}, "env": {"K": reference},
                   "args": ["--key", reference], "command": reference}[field]
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"leak": body}}))
    env = {name: "secret-value"}
    found = session_servers(project, home=home, env=env, approval=Approval(project, approved=frozenset({ALL})))
    assert found.servers == {} and len(found.warnings) == 1
    assert f"names the credential {name}" in found.warnings[0] and "secret-value" not in found.warnings[0]


@pytest.mark.parametrize("text, named", [
    ({"url": "http://x/${ANTHROPIC_API_KEY:-none}"}, "ANTHROPIC_API_KEY"),
    ({"headers": {"a": "Bearer ${RAY_AUTH_TOKEN}"}}, "RAY_AUTH_TOKEN"),
    ({"command": "$ANTHROPIC_API_KEY"}, None),  # Claude Code leaves a bare $VAR as written
    ({"env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}, None),
    ({"args": ["${HOME}"]}, None),
])
def test_which_references_name_a_credential(text, named):
    assert credential_named(text) == named


def test_the_persons_approval_of_a_project_server_still_expands_other_variables(dirs):
    home, project = dirs
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"gh": {"command": "gh", "env": {"T": "${GITHUB_TOKEN}"}}}}))
    found = session_servers(project, home=home, env={"GITHUB_TOKEN": "ghp"}, approval=Approval(project, approved=frozenset({"gh"})))
    assert found.servers["gh"].env == {"T": "ghp"}


def test_approval_of_combines_the_store_and_the_settings():
    trust = Trust(Path("/p"), True, "test", frozenset({"a"}))
    approval = Approval.of(trust, {"b"}, {"a"})
    assert approval.approved == {"a", "b"} and not approval.admits("a") and approval.admits("b")


def _covey(monkeypatch, home: Path, capsys, *args: str) -> tuple[int, str, str]:
    monkeypatch.setenv("HOME", str(home))
    code = cli.main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_covey_trust_lists_and_revokes(monkeypatch, capsys, tmp_path, untrusted_folder):
    home = tmp_path / "home"
    home.mkdir()
    code, out, _ = _covey(monkeypatch, home, capsys, "trust", str(untrusted_folder))
    assert code == 0 and "is trusted" in out and TrustStore(home).trusted_by(untrusted_folder)
    assert _covey(monkeypatch, home, capsys, "trust", "--list")[1].splitlines() == [str(untrusted_folder)]
    code, out, _ = _covey(monkeypatch, home, capsys, "trust", "--revoke", str(untrusted_folder))
    assert code == 0 and "no longer trusted" in out and TrustStore(home).folders() == []
    code, _, err = _covey(monkeypatch, home, capsys, "trust", "--revoke", str(untrusted_folder))
    assert code == 1 and err.count("\n") == 1 and "is not a folder you trusted" in err


def test_covey_trust_defaults_to_this_folder(monkeypatch, capsys, tmp_path, untrusted_folder):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.chdir(untrusted_folder)
    assert _covey(monkeypatch, home, capsys, "trust")[0] == 0
    assert TrustStore(home).folders() == [str(untrusted_folder.resolve())]


def test_covey_trust_of_a_missing_folder_is_one_line(monkeypatch, capsys, tmp_path):
    code, _, err = _covey(monkeypatch, tmp_path, capsys, "trust", str(tmp_path / "nowhere"))
    assert code == 1 and err.count("\n") == 1 and "is not a folder" in err


def test_covey_mcp_approve_and_revoke(monkeypatch, capsys, dirs):
    home, project = dirs
    code, out, _ = _covey(monkeypatch, home, capsys, "mcp", "approve", "db", "--cwd", str(project))
    assert code == 0 and TrustStore(home).approved(project) == {"db"}
    code, _, err = _covey(monkeypatch, home, capsys, "mcp", "approve", "nosuch", "--cwd", str(project))
    assert code == 1 and "names no server 'nosuch'" in err and "db, search" in err
    assert _covey(monkeypatch, home, capsys, "mcp", "approve", "--all", "--cwd", str(project))[0] == 0
    assert ALL in TrustStore(home).approved(project)
    code, out, _ = _covey(monkeypatch, home, capsys, "mcp", "revoke", "--all", "--cwd", str(project))
    assert code == 0 and TrustStore(home).approved(project) == set()


@pytest.mark.parametrize("args", [["mcp", "approve"], ["mcp", "list", "db"], ["mcp", "revoke"]])
def test_covey_mcp_misuse_is_one_line(monkeypatch, capsys, dirs, args):
    home, project = dirs
    code, _, err = _covey(monkeypatch, home, capsys, *args, "--cwd", str(project))
    assert code == 1 and err.count("\n") == 1


def test_covey_mcp_list_starts_only_approved_servers_of_a_trusted_folder(monkeypatch, capsys, tmp_path, untrusted_folder):
    home, project = tmp_path / "home", untrusted_folder
    home.mkdir()
    marker = tmp_path / "started"
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": {
        "command": "sh", "args": ["-c", f"touch {marker}; exec {sys.executable} {SERVER}"]}}}))
    code, out, err = _covey(monkeypatch, home, capsys, "mcp", "list", "--cwd", str(project))
    assert code == 0 and not marker.exists() and "not a trusted folder" in err and "MCP servers (demo)" in err
    TrustStore(home).trust(project)
    code, out, err = _covey(monkeypatch, home, capsys, "mcp", "list", "--cwd", str(project))
    assert code == 0 and not marker.exists() and "covey mcp approve demo" in err
    TrustStore(home).approve(project, ["demo"])
    code, out, err = _covey(monkeypatch, home, capsys, "mcp", "list", "--cwd", str(project))
    assert code == 0 and marker.exists() and "demo:" in out and "Connected" in out


@pytest.mark.parametrize("trusted", [True, False])
def test_a_server_name_with_a_newline_cannot_fake_a_line(home_and_project, trusted):
    home, project = home_and_project
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"x\ncovey: all clear": {"command": "c"}}}))
    found = session_servers(project, home=home, env={}, approval=Approval(project, trusted=trusted))
    lines = found.warnings + ([found.set_aside.line(project)] if not trusted else [])
    assert lines and all("\n" not in line and "x\\ncovey: all clear" in line for line in lines), lines

"""A project on disk and policies over it, for the security suite (plain Python, no Ray)."""

from __future__ import annotations

from pathlib import Path

from covey.permissions import PermissionPolicy, parse_rule


def project(tmp_path: Path) -> tuple[Path, Path]:
    """A project with a secret, a .git folder and a link that leaves it; and a HOME beside it."""
    root, home, outside = tmp_path / "proj", tmp_path / "home", tmp_path / "outside"
    for folder in (root / "src", root / ".git" / "hooks", root / ".claude", home / ".ssh", outside):
        folder.mkdir(parents=True, exist_ok=True)
    (root / ".env").write_text("SECRET=1\n")
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "README.md").write_text("readme\n")
    (outside / "notes.txt").write_text("outside\n")
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "alias").symlink_to(root / ".env")
    return root, home


def policy(root: Path, home: Path, mode: str = "default", *, allow=(), deny=(), ask=(), **kwargs) -> PermissionPolicy:
    rules = lambda texts, behavior: [parse_rule(t, source="cliArg", behavior=behavior) for t in texts]  # noqa: E731
    return PermissionPolicy(mode=mode, allow=rules(allow, "allow"), deny=rules(deny, "deny"), ask=rules(ask, "ask"),
                            project_root=root, home=home, **kwargs)


def bash(p: PermissionPolicy, command: str) -> str:
    """The behavior the policy gives a Bash command before anyone is asked."""
    return p.decide("Bash", False, command, {"command": command}).behavior

import asyncio
from pathlib import Path

import pytest

from covey.errors import UserError
from covey.skills import Skill, UnknownSkill, discover_skills, find_skill, preload_skills


def _write(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _skill_md(name: str | None, description: str, body: str) -> str:
    head = f"name: {name}\n" if name else ""
    return f"---\n{head}description: {description}\n---\n{body}\n"


@pytest.fixture
def dirs(tmp_path):
    home, project, plugin = tmp_path / "home", tmp_path / "project", tmp_path / "plugins" / "acme"
    for d in (home, project, plugin):
        d.mkdir(parents=True)
    return home, project, plugin


def test_project_beats_user_and_covey_beats_claude(dirs):
    home, project, _ = dirs
    _write(home / ".claude" / "skills", "pdf", _skill_md("pdf", "user claude", "u"))
    _write(home / ".covey" / "skills", "pdf", _skill_md("pdf", "user covey", "u"))
    _write(project / ".claude" / "skills", "pdf", _skill_md("pdf", "project claude", "p"))
    _write(home / ".claude" / "skills", "only-user", _skill_md(None, "from the folder name", "x"))
    scan = discover_skills(project, home=home)
    assert scan.skills["pdf"].description == "project claude" and scan.skills["pdf"].source == "project"
    assert scan.skills["only-user"].source == "user"
    _write(project / ".covey" / "skills", "pdf", _skill_md("pdf", "project covey", "p"))
    assert discover_skills(project, home=home).skills["pdf"].description == "project covey"


def test_plugin_skills_are_prefixed(dirs):
    home, project, plugin = dirs
    _write(plugin / "skills", "review", _skill_md("review", "reviews", "r"))
    scan = discover_skills(project, home=home, plugin_dirs=[plugin])
    assert set(scan.skills) == {"acme:review"} and scan.skills["acme:review"].source == "plugin"


def test_bad_skill_files_are_reported_and_skipped(dirs):
    home, project, _ = dirs
    root = project / ".covey" / "skills"
    no_desc = _write(root, "a", "---\nname: a\n---\nbody\n")
    bad_yaml = _write(root, "b", "---\nname: [b\n---\nbody\n")
    no_front = _write(root, "c", "just text\n")
    _write(root, "good", _skill_md("good", "fine", "ok"))
    scan = discover_skills(project, home=home)
    assert set(scan.skills) == {"good"}
    messages = {e.path: e.message for e in scan.errors}
    assert set(messages) == {str(no_desc), str(bad_yaml), str(no_front)}
    assert "description" in messages[str(no_desc)]


def _skills(*names: str) -> dict[str, Skill]:
    return {n: Skill(name=n, description="d", path=Path("/x") / n, source="plugin") for n in names}


def test_find_skill_order():
    skills = _skills("review", "acme:review", "acme:lint", "acme:deep:fmt")
    assert find_skill("review", skills).name == "review"  # exact first
    assert find_skill("lint", skills).name == "acme:lint"  # plugin-prefixed
    assert find_skill("fmt", skills).name == "acme:deep:fmt"  # any ':name' suffix
    assert find_skill("acme:lint", skills).name == "acme:lint"


def test_find_skill_errors_name_it_and_list_what_exists():
    with pytest.raises(UnknownSkill) as info:
        find_skill("nope", _skills("pdf", "acme:lint"))
    assert "'nope'" in str(info.value) and "acme:lint, pdf" in str(info.value)
    assert isinstance(info.value, UserError)
    with pytest.raises(UnknownSkill, match="ambiguous.*a:lint, b:lint"):
        find_skill("lint", _skills("a:lint", "b:lint"))


async def test_preload_is_concurrent_and_keeps_order(dirs, monkeypatch):
    home, project, _ = dirs
    root = project / ".covey" / "skills"
    for name in ("one", "two", "three"):
        _write(root, name, _skill_md(name, "d", f"do {name}"))
    skills = discover_skills(project, home=home).skills
    active = peak = 0
    original = Skill.instructions

    async def slow(self):
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.05)
        active -= 1
        return await original(self)

    monkeypatch.setattr(Skill, "instructions", slow)
    messages = await preload_skills(["three", "one", "two"], skills)
    assert peak == 3
    assert [m["role"] for m in messages] == ["user"] * 3
    for message, name in zip(messages, ["three", "one", "two"]):
        assert message["content"].startswith(f'<skill name="{name}">') and f"do {name}" in message["content"]
        assert message["content"].endswith("</skill>")


async def test_preload_checks_every_name_before_reading(dirs):
    with pytest.raises(UnknownSkill, match="'missing'"):
        await preload_skills(["missing"], {})

"""Finding skills as Claude Code finds them: names, precedence, commands, plugins, managed, locks."""

import asyncio
import shutil
from pathlib import Path

import pytest

from covey.definitions.skill import Skill
from covey.definitions.skill_loader import UnknownSkill, discover_skills, find_skill, preload_skills
from covey.errors import UserError
from covey.plugins import read_plugin

CORPUS = Path(__file__).parents[1] / "data" / "claude_files"


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


@pytest.fixture
def corpus_project(tmp_path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(CORPUS / "skills" / "project", project)
    return project


def test_a_skill_is_named_by_its_folder_and_its_frontmatter_name_is_a_label(corpus_project, tmp_path):
    skills = discover_skills(corpus_project, home=tmp_path / "home").skills
    skill = skills["agent-development"]
    assert skill.label == "Agent Development" and "Agent Development" not in skills
    assert find_skill("agent-development", skills) is skill


def test_personal_beats_project_and_covey_folder_beats_claude_folder(dirs):
    home, project, _ = dirs
    _write(project / ".claude" / "skills", "pdf", _skill_md("pdf", "project claude", "p"))
    _write(home / ".claude" / "skills", "pdf", _skill_md("pdf", "user claude", "u"))
    _write(home / ".claude" / "skills", "only-user", _skill_md(None, "from the folder name", "x"))
    scan = discover_skills(project, home=home)
    assert (scan.skills["pdf"].description, scan.skills["pdf"].source) == ("user claude", "user")
    assert scan.skills["only-user"].source == "user"
    _write(home / ".covey" / "skills", "pdf", _skill_md("pdf", "user covey", "u"))
    assert discover_skills(project, home=home).skills["pdf"].description == "user covey"


def test_managed_skills_beat_personal_ones(dirs, tmp_path):
    home, project, _ = dirs
    _write(home / ".claude" / "skills", "pdf", _skill_md("pdf", "user", "u"))
    managed = tmp_path / "managed"
    _write(managed / ".claude" / "skills", "pdf", _skill_md("pdf", "managed", "m"))
    skill = discover_skills(project, home=home, managed_dir=managed).skills["pdf"]
    assert (skill.description, skill.source) == ("managed", "policy")


def test_commands_are_skills_named_by_file_and_a_skill_beats_a_command(corpus_project, tmp_path):
    skills = discover_skills(corpus_project, home=tmp_path / "home").skills
    review = skills["review"]
    assert (review.kind, review.description) == ("command", "Review the staged changes before a commit.")
    assert "ignored-name" not in skills  # a command's frontmatter name is ignored
    assert skills["deploy"].kind == "skill" and skills["deploy"].path.name == "SKILL.md"


def test_description_falls_back_to_the_first_paragraph_and_a_file_without_frontmatter_loads(dirs):
    home, project, _ = dirs
    root = project / ".claude" / "skills"
    _write(root, "plain", "# Plain skill\nDoes plain things.\n\nMore detail.\n")
    _write(root, "nodesc", "---\nname: nodesc\n---\nFirst paragraph\nspans lines.\n\nSecond.\n")
    skills = discover_skills(project, home=home).skills
    assert skills["plain"].description == "Plain skill Does plain things."
    assert skills["nodesc"].description == "First paragraph spans lines."


def test_allowed_tools_as_a_string_or_a_list_with_the_skill_dir_filled_in(corpus_project, tmp_path):
    skills = discover_skills(corpus_project, home=tmp_path / "home").skills
    assert skills["agent-development"].allowed_tools == ["Read", "Write", "Bash(git add:*)", "Bash(git status)"]
    assert skills["release-notes"].allowed_tools == ["Read", "Bash(git log:*)"]
    script = corpus_project / ".claude" / "skills" / "render-chart" / "scripts" / "render.sh"
    assert skills["render-chart"].allowed_tools == [f"Bash({script} *)"]


def test_a_bad_allowed_tools_entry_is_reported_and_the_rest_kept(dirs):
    home, project, _ = dirs
    path = _write(project / ".claude" / "skills", "odd", "---\ndescription: d\nallowed-tools: Read Bash(unclosed\n---\nb\n")
    scan = discover_skills(project, home=home)
    assert scan.skills["odd"].allowed_tools == ["Read"]
    assert [(e.path, "allowed-tools" in e.message) for e in scan.errors] == [(str(path), True)]


def test_disable_model_invocation_accepts_yes(corpus_project, tmp_path):
    skills = discover_skills(corpus_project, home=tmp_path / "home").skills
    assert skills["deploy"].model_invocable is False and skills["review"].model_invocable is True


def test_plugin_parts_are_namespaced(tmp_path):
    plugin = read_plugin(CORPUS / "plugins" / "review-kit", "--plugin-dir").plugin
    skills = discover_skills(tmp_path, home=tmp_path / "home", plugins=[plugin]).skills
    # a plugin skill's frontmatter name replaces its folder name; a command keeps its file name
    assert {"review-kit:changelog-writer", "review-kit:ship"} <= set(skills)
    assert skills["review-kit:ship"].kind == "command" and skills["review-kit:ship"].plugin == "review-kit"
    assert find_skill("ship", skills).name == "review-kit:ship"


def test_a_plugin_name_already_prefixed_is_not_doubled_and_subfolders_of_commands_are_segments(dirs):
    home, project, plugin = dirs
    _write(plugin / "skills", "fancy", _skill_md("acme:fancy", "d", "b"))
    (plugin / "commands" / "ops").mkdir(parents=True)
    (plugin / "commands" / "ops" / "restart.md").write_text("Restart the service.\n")
    skills = discover_skills(project, home=home, plugin_dirs=[plugin]).skills
    assert {"acme:fancy", "acme:ops:restart"} <= set(skills)
    assert skills["acme:ops:restart"].description == "Restart the service."


def test_a_root_skill_makes_a_single_skill_plugin(tmp_path):
    plugin = read_plugin(CORPUS / "plugins" / "bare-helper", "--plugin-dir").plugin
    skills = discover_skills(tmp_path, home=tmp_path / "home", plugins=[plugin]).skills
    assert list(skills) == ["bare-helper:bare-helper"]


def test_a_skills_lock_keeps_only_plugin_and_managed_skills(corpus_project, tmp_path):
    managed = tmp_path / "managed"
    _write(managed / ".claude" / "skills", "house-style", _skill_md(None, "managed", "m"))
    plugin = read_plugin(CORPUS / "plugins" / "review-kit", "--plugin-dir").plugin
    skills = discover_skills(corpus_project, home=tmp_path / "home", plugins=[plugin], managed_dir=managed,
                             locked=["skills"]).skills
    assert all(s.source in ("plugin", "policy") for s in skills.values()) and "house-style" in skills
    assert "agent-development" not in skills and "review" not in skills


def test_bad_skill_files_are_reported_and_skipped(dirs):
    home, project, _ = dirs
    root = project / ".covey" / "skills"
    bad_yaml = _write(root, "b", "---\nname: [b\n---\nbody\n")
    bad_type = _write(root, "c", "---\nallowed-tools: {a: 1}\n---\nbody\n")
    _write(root, "good", _skill_md("good", "fine", "ok"))
    scan = discover_skills(project, home=home)
    assert set(scan.skills) == {"good"}
    assert {e.path for e in scan.errors} == {str(bad_yaml), str(bad_type)}


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


async def test_a_definition_preloads_a_skill_by_its_folder_name_but_never_a_user_only_one(corpus_project, tmp_path):
    skills = discover_skills(corpus_project, home=tmp_path / "home").skills
    [message] = await preload_skills(["agent-development"], skills)
    assert message["content"].startswith('<skill name="agent-development">')
    with pytest.raises(UnknownSkill, match="disable-model-invocation"):
        await preload_skills(["deploy"], skills)


async def test_preload_checks_every_name_before_reading(dirs):
    with pytest.raises(UnknownSkill, match="'missing'"):
        await preload_skills(["missing"], {})


def test_a_skill_file_over_1_mib_or_with_an_alias_bomb_is_reported_and_skipped(dirs):
    from tests.common.test_safe_yaml import BOMB

    home, project, _ = dirs
    root = project / ".covey" / "skills"
    huge = _write(root, "huge", _skill_md("huge", "d", "x" * (1024 * 1024)))
    bomb = _write(root, "bomb", f"---\ndescription: d\n{BOMB}---\nbody\n")
    _write(root, "good", _skill_md("good", "fine", "ok"))
    scan = discover_skills(project, home=home)
    assert set(scan.skills) == {"good"}
    messages = {e.path: e.message for e in scan.errors}
    assert "over 1,048,576 bytes" in messages[str(huge)] and "aliases" in messages[str(bomb)]

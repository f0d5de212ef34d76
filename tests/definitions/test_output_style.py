"""Output styles: the built-in ones, style files in the user's and the project's ``output-styles``
folders, the name ``outputStyle`` gives, and what each does to the main agent's prompt."""

from __future__ import annotations

from pathlib import Path

from covey.definitions.output_style import BUILT_IN_STYLES, DEFAULT_STYLE, choose_style, output_styles, styled_prompt
from covey.definitions.system_prompt import BRIEF, CODING, DELEGATION, GENERAL_IDENTITY, IDENTITY, MAIN_PROMPT


def _style(base: Path, name: str, text: str, folder: str = ".claude") -> Path:
    path = base / folder / "output-styles" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_default_style_is_covey_own_prompt_unchanged():
    assert styled_prompt(DEFAULT_STYLE) == MAIN_PROMPT
    assert choose_style(None, None, "/nowhere") == (DEFAULT_STYLE, [])
    assert choose_style("default", "x", "/nowhere", home="/nowhere")[0] is DEFAULT_STYLE


def test_a_built_in_style_keeps_the_coding_instructions_drops_the_brevity_line_and_comes_last(tmp_path):
    for name in ("Explanatory", "Learning", "Proactive", "Concise"):
        style, warnings = choose_style(name, "settings", tmp_path, home=tmp_path)
        prompt = styled_prompt(style)
        assert warnings == [] and style is BUILT_IN_STYLES[name]
        assert prompt.startswith(f"{IDENTITY} {CODING} {DELEGATION}\n\n# Output style: {name}\n")
        assert BRIEF not in prompt and prompt.endswith(style.prompt) and style.prompt
    assert "TODO(human)" in BUILT_IN_STYLES["Learning"].prompt
    assert choose_style("explanatory", None, tmp_path, home=tmp_path)[0].name == "Explanatory"  # any case


def test_a_custom_style_replaces_the_coding_instructions_unless_it_keeps_them(tmp_path):
    _style(tmp_path, "writer", "---\nname: Editor\ndescription: Edits prose\n---\nAnswer as a copy editor.\n")
    _style(tmp_path, "diagrams", "---\ndescription: Draws\nkeep-coding-instructions: true\n---\nAlways add a diagram.\n")
    editor, _ = choose_style("Editor", None, tmp_path, home=tmp_path / "home")
    assert (editor.description, editor.source, editor.keep_coding_instructions) == ("Edits prose", "project", False)
    assert styled_prompt(editor) == f"{GENERAL_IDENTITY} {DELEGATION}\n\n# Output style: Editor\nAnswer as a copy editor."
    diagrams, _ = choose_style("diagrams", None, tmp_path, home=tmp_path / "home")  # named after its file
    assert styled_prompt(diagrams).startswith(f"{IDENTITY} {CODING} {DELEGATION}\n\n# Output style: diagrams\n")


def test_a_file_without_frontmatter_is_all_text_and_the_project_beats_the_user(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    _style(home, "terse", "From the user.\n", folder=".covey")
    _style(project, "terse", "---\nname: terse\n---\nFrom the project.\n")
    _style(home, "mine", "Only mine.\n")
    styles, warnings = output_styles(project, home=home)
    assert warnings == [] and styles["terse"].prompt == "From the project." and styles["mine"].source == "user"
    assert set(BUILT_IN_STYLES) <= set(styles)


def test_setting_sources_decide_which_style_folders_are_read(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    _style(home, "mine", "Mine.\n")
    _style(project, "ours", "Ours.\n")
    assert {"mine", "ours"} <= set(output_styles(project, home=home, sources=None)[0])
    only_user = set(output_styles(project, home=home, sources=frozenset({"user"}))[0])
    assert "mine" in only_user and "ours" not in only_user
    assert not {"mine", "ours"} & set(output_styles(project, home=home, sources=frozenset())[0])
    style, warnings = choose_style("ours", "/p/.claude/settings.json", project, home=home, sources=frozenset({"user"}))
    assert style.name == "ours" and styled_prompt(style) == MAIN_PROMPT and "unknown output style 'ours'" in warnings[0]


def test_an_unknown_name_is_a_warning_naming_the_setting_and_its_file_and_the_default_is_used_under_it(tmp_path):
    """As Claude Code 2.1.337: the name is reported unchanged, the prompt is the default one."""
    style, warnings = choose_style("Pirate", "/p/.claude/settings.local.json", tmp_path, home=tmp_path)
    assert style == DEFAULT_STYLE.model_copy(update={"name": "Pirate"}) and styled_prompt(style) == MAIN_PROMPT
    assert warnings == ["/p/.claude/settings.local.json: outputStyle: unknown output style 'Pirate' (known: Concise, "
                        "default, Explanatory, Learning, Proactive); the default style is used (reported by its "
                        "name, as Claude Code does)"]


def test_a_bad_style_file_is_a_warning_naming_it_and_the_others_load(tmp_path):
    bad = _style(tmp_path, "bad", "---\nkeep-coding-instructions: [1, 2]\n---\nx\n")
    broken = _style(tmp_path, "broken", "---\nname: 'unclosed\n---\nx\n")
    _style(tmp_path, "good", "Fine.\n")
    styles, warnings = output_styles(tmp_path, home=tmp_path / "home")
    assert "good" in styles and "bad" not in styles and "broken" not in styles
    assert any(w.startswith(f"{bad}: field 'keep-coding-instructions'") for w in warnings)
    assert any(w.startswith(f"{broken}: cannot read") and w.endswith("output style not loaded") for w in warnings)

"""A session's ``outputStyle`` (settings) reshapes its main agent's system prompt and is what
``system/init`` reports; sub-agents keep their own prompts. Built, not run: no Ray."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

from covey.definitions.builtin import BUILTIN_AGENTS
from covey.definitions.output_style import BUILT_IN_STYLES
from covey.definitions.system_prompt import MAIN_PROMPT
from covey.model.scripted import ScriptedModel
from covey.runtime.ports import SessionRuntime
from covey.session import Session
from covey.subagents.children import child_spec
from tests.session.scripts import write


def _session(tmp_path: Path, **options) -> Session:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    (tmp_path / "project").mkdir(exist_ok=True)
    return Session(cwd=str(tmp_path / "project"), env=env, model=ScriptedModel.from_turns([]),
                   transcript_dir=str(tmp_path / "t"), **options)


def _system_text(spec) -> str:
    return "\n".join(block["text"] for block in spec.system)


async def test_a_built_in_style_shapes_the_main_prompt_and_init_while_a_child_keeps_its_own(tmp_path):
    write(tmp_path / "project/.claude/settings.local.json", json.dumps({"outputStyle": "Explanatory"}))
    session = _session(tmp_path)
    assert session.init_event().wire()["output_style"] == "Explanatory"
    runtime = SessionRuntime(session_id=session.session_id, registry=None, mailbox=None)  # type: ignore[arg-type]
    main = session.main_spec("go", runtime)
    explanatory = BUILT_IN_STYLES["Explanatory"].prompt
    assert "# Output style: Explanatory" in _system_text(main) and explanatory in _system_text(main)
    call = SimpleNamespace(model=None, cwd=None, prompt="look", mode=None, description="look", effort=None)
    child = await child_spec(main, BUILTIN_AGENTS["general-purpose"], call, agent_id="a-child", tool_use_id="t",
                             background=False, available_tools=["Read"])
    assert "Output style" not in _system_text(child) and explanatory not in _system_text(child)


def test_a_custom_style_from_the_users_folder_replaces_the_coding_instructions(tmp_path):
    write(tmp_path / "home/.claude/output-styles/editor.md",
           "---\nname: Editor\ndescription: Edits prose\n---\nAnswer as a copy editor would.\n")
    session = _session(tmp_path, settings={"outputStyle": "Editor"})
    prompt = session._main_prompt()
    assert prompt.endswith("# Output style: Editor\nAnswer as a copy editor would.")
    assert "read files before you change them" not in prompt
    assert session.init_event().wire()["output_style"] == "Editor"


def test_the_style_files_follow_setting_sources(tmp_path):
    write(tmp_path / "home/.claude/output-styles/editor.md", "Answer as a copy editor would.\n")
    session = _session(tmp_path, settings={"outputStyle": "editor"}, setting_sources=["project"])
    assert session._main_prompt() == MAIN_PROMPT and session.init_event().wire()["output_style"] == "editor"
    assert any("unknown output style 'editor'" in w for w in session.warnings)


def test_an_unknown_style_is_a_warning_naming_the_setting_and_its_file_and_the_run_goes_on(tmp_path):
    """As Claude Code 2.1.337: ``system/init`` reports the name unchanged; the prompt is the default one."""
    settings = write(tmp_path / "home/.claude/settings.json", json.dumps({"outputStyle": "Pirate"}))
    session = _session(tmp_path)
    assert session._main_prompt() == MAIN_PROMPT and session.init_event().wire()["output_style"] == "Pirate"
    (warning,) = [w for w in session.warnings if "outputStyle" in w]
    assert warning.startswith(f"{settings}: outputStyle: unknown output style 'Pirate'")
    assert warning.endswith("the default style is used (reported by its name, as Claude Code does)")


def test_a_system_prompt_of_ones_own_is_not_restyled_but_init_still_names_the_style(tmp_path):
    session = _session(tmp_path, settings={"outputStyle": "Learning"}, system_prompt="You are a terse bot.")
    assert session._main_prompt() == "You are a terse bot."
    assert session.init_event().wire()["output_style"] == "Learning"


def test_the_user_settings_are_claude_config_dirs_when_it_is_set(tmp_path):
    # As Claude Code: $CLAUDE_CONFIG_DIR/settings.json is the user's settings file, not ~/.claude's
    # (claude-agent-sdk resumes a session store's session in such a folder: tests/sdk/test_sdk_session_store.py).
    write(tmp_path / "home/.claude/settings.json", json.dumps({"outputStyle": "Learning"}))
    write(tmp_path / "config/settings.json", json.dumps({"outputStyle": "Explanatory"}))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "config")}
    (tmp_path / "project").mkdir()
    session = Session(cwd=str(tmp_path / "project"), env=env, model=ScriptedModel.from_turns([]),
                      transcript_dir=str(tmp_path / "t"))
    assert session.init_event().wire()["output_style"] == "Explanatory"

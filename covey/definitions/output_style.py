"""Output styles: Claude Code's ``outputStyle`` setting, which reshapes the main agent's system prompt
(docs/definitions.md#output-styles).

A style is built in (``default``, ``Proactive``, ``Concise``, ``Explanatory``, ``Learning``, in
covey's own words, in Claude Code's order) or a markdown file in ``~/.claude/output-styles/`` or ``~/.covey/output-styles/``
(user) or the project's ``.claude/output-styles/`` or ``.covey/output-styles/`` (project): its
frontmatter's ``name`` (else the file's name), ``description`` and ``keep-coding-instructions``,
its body the text. Later places win: built-in < user < project. ``--setting-sources`` decides which
places are read. Only the main agent's prompt changes; sub-agents keep their own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from covey.common.frontmatter import TooLarge, parse_frontmatter, read_definition_text
from covey.common.safe_files import reason
from covey.definitions.system_prompt import CODING, DELEGATION, GENERAL_IDENTITY, IDENTITY, MAIN_PROMPT
from covey.settings.files import Sources, reads

StyleSource = Literal["built-in", "user", "project"]


class OutputStyle(BaseModel):
    """One output style: what it adds to the main agent's system prompt, and whether the prompt keeps
    its coding instructions."""

    model_config = ConfigDict(populate_by_name=True, frozen=True)

    name: str
    """What ``outputStyle`` names it by (and ``system/init`` reports)."""
    description: str = ""
    """One line saying what the style is for."""
    prompt: str = ""
    """The instructions added at the end of the main agent's system prompt."""
    keep_coding_instructions: bool = Field(default=False, alias="keep-coding-instructions")
    """Keep the prompt's software-engineering instructions (a custom style drops them unless it says so)."""
    source: StyleSource = "built-in"
    path: str | None = None
    """The file it came from (None: built in)."""


DEFAULT_STYLE = OutputStyle(name="default", description="covey's own prompt for software work",
                            keep_coding_instructions=True)

_BUILT_IN = (
    DEFAULT_STYLE,
    OutputStyle(name="Proactive", keep_coding_instructions=True,
                description="Acts on reasonable assumptions instead of stopping to ask",
                prompt="Act rather than plan aloud. When a routine decision has a sensible answer, make it, "
                       "say in one line what you assumed, and go on; ask the user only when a choice is hard "
                       "to undo or the task is truly ambiguous."),
    OutputStyle(name="Concise", keep_coding_instructions=True,
                description="Leads with the result and keeps replies short",
                prompt="Lead with the result. Skip preambles, restated questions and narration of your steps; "
                       "keep replies to a few lines unless the user asks for more. Do the work as thoroughly "
                       "as ever: only the telling is short."),
    OutputStyle(name="Explanatory", keep_coding_instructions=True,
                description="Does the work and teaches the reasoning behind it",
                prompt="Besides doing the task, help the user understand it. Around the code you write, add "
                       "short notes, each on a line starting with \"Insight:\", on why you chose one approach "
                       "over another, which conventions of this codebase you followed, and trade-offs worth "
                       "knowing. Keep each note to two or three sentences and about this codebase, not general "
                       "programming knowledge."),
    OutputStyle(name="Learning", keep_coding_instructions=True,
                description="Pairs with the user, who writes the key pieces themselves",
                prompt="Work with the user so that they learn by doing. Do the routine parts yourself; where "
                       "a small piece of code carries a real decision (a condition, a data structure, how an "
                       "error is handled: a few lines), write what surrounds it, put a TODO(human) comment "
                       "where their part goes, say what it must do and what to weigh, and ask them to write "
                       "it. One such request at a time. Explain your own choices briefly in notes starting "
                       "with \"Insight:\"."),
)
BUILT_IN_STYLES = {style.name: style for style in _BUILT_IN}


def output_styles(cwd: Path | str, *, home: Path | str | None = None,
                  sources: Sources = None) -> tuple[dict[str, OutputStyle], list[str]]:
    """Every style a session in ``cwd`` can choose, by name, and a warning for each file that could not be read."""
    styles, warnings = dict(BUILT_IN_STYLES), list[str]()
    places: tuple[tuple[Path, StyleSource], ...] = ((Path(home) if home is not None else Path.home(), "user"),
                                                    (Path(cwd), "project"))
    for base, source in places:
        if not reads(sources, source):
            continue
        for folder in (".claude", ".covey"):
            directory = base / folder / "output-styles"
            for path in sorted(directory.glob("*.md")) if directory.is_dir() else []:
                style = _read(path, source, warnings)
                if style is not None:
                    styles[style.name] = style
    return styles, warnings


def choose_style(name: str | None, where: str | None, cwd: Path | str, *, home: Path | str | None = None,
                 sources: Sources = None) -> tuple[OutputStyle, list[str]]:
    """The style ``outputStyle`` names (``where``: the settings file that set it), and what to warn
    about. An unknown name is a warning and the default style under that name: as Claude Code, the
    session reports the name as set (``system/init``, ``initialize``) and answers with the default prompt."""
    if not name:
        return DEFAULT_STYLE, []
    styles, warnings = output_styles(cwd, home=home, sources=sources)
    style = styles.get(name) or next((s for key, s in styles.items() if key.lower() == name.lower()), None)
    if style is None:
        known = ", ".join(sorted(styles, key=str.lower))
        warnings.append(f"{where or 'settings'}: outputStyle: unknown output style {name!r} (known: {known}); "
                        "the default style is used (reported by its name, as Claude Code does)")
        return DEFAULT_STYLE.model_copy(update={"name": name}), warnings
    return style, warnings


def styled_prompt(style: OutputStyle) -> str:
    """covey's main prompt under ``style``. The default style is the prompt itself. Any other drops the
    line asking for short answers (a style says how to answer); one that does not keep the coding
    instructions drops those too and introduces covey as a general helper; the style's text comes last."""
    if style.source == "built-in" and not style.prompt:  # the default, whatever an unknown name called it
        return MAIN_PROMPT
    keep = style.keep_coding_instructions
    base = " ".join((IDENTITY, CODING, DELEGATION) if keep else (GENERAL_IDENTITY, DELEGATION))
    return f"{base}\n\n# Output style: {style.name}\n{style.prompt}" if style.prompt else base


def _read(path: Path, source: StyleSource, warnings: list[str]) -> OutputStyle | None:
    """One style file; a bad one is a warning naming it, and the others load."""
    try:
        text = read_definition_text(path)
        parsed = parse_frontmatter(text)
        fields: Any = parsed.data if parsed is not None else {}
        if fields is not None and not isinstance(fields, dict):
            raise ValueError("the frontmatter is not a mapping")
        body = parsed.body if parsed is not None else text
        data = {key: value for key, value in (fields or {}).items() if value is not None}
        data.setdefault("name", path.stem)
        return OutputStyle.model_validate({**_known(data), "prompt": body.strip(), "source": source, "path": str(path)})
    except (OSError, UnicodeDecodeError, TooLarge, ValueError, yaml.YAMLError) as exc:
        problem = _problem(exc)
        warnings.append(f"{path}: {problem}; output style not loaded")
        return None


def _known(data: dict[str, Any]) -> dict[str, Any]:
    """The frontmatter keys a style has (Claude Code ignores the others)."""
    return {key: data[key] for key in ("name", "description", "keep-coding-instructions") if key in data}


def _problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"field {'.'.join(str(part) for part in first['loc'])!r}: {first['msg']}"
    return f"cannot read: {reason(exc)}"

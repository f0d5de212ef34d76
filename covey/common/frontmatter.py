"""Markdown files with YAML frontmatter (agent definitions, skills), read the way Claude Code reads them.

The block opens with a first line of ``---`` and closes at the first later line that
starts with ``---`` (so ``-----`` closes it too). When the YAML inside does not parse,
Claude Code quotes each top-level ``key: value`` line whose value holds a character
YAML reads as syntax (``: ``, ``#``, ``[``, ``{``, ``*``, ``&``, ``!``, ``|``, ``>``,
``%``, ``@``, a backquote) and parses once more: that is how an unquoted
``description: Use when: ...`` loads there, and it loads here the same way. A value that
parses on its own as a flow list (``tools: ["Read", "Grep"]``) is left as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from covey.common.safe_files import FileTooLarge, read_text
from covey.common.safe_yaml import YamlRefused, load_yaml

MAX_DEFINITION_FILE_BYTES = 1024 * 1024
"""An agent definition or skill file larger than this is refused unread: no real one comes near it."""
MAX_DESCRIPTION_CHARS = 20_000
"""Room for a description with several ``<example>`` blocks; it is sent with every request."""

# A value with one of these unquoted breaks (or silently changes) a YAML plain scalar.
_YAML_SYNTAX = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
# Only simple top-level lines are repaired: not indented, not list items, not block scalars' bodies.
_KEY_VALUE = re.compile(r"^([A-Za-z_-]+):\s+(.+)$")


@dataclass(frozen=True)
class Frontmatter:
    """A parsed frontmatter block: its mapping, the body after it, and whether it needed repair."""

    data: Any
    """What the YAML holds: a dict for a well-formed block (None for an empty one)."""
    body: str
    repaired: bool = False
    """The YAML parsed only after quoting values (Claude Code's repair)."""


TooLarge = FileTooLarge
"""A definition or skill file over ``MAX_DEFINITION_FILE_BYTES``."""


def read_definition_text(path: Path) -> str:
    """The file's text, read only up to the size limit (a huge file is refused, not loaded; a
    FIFO or device among the definitions is refused unopened, so it never hangs the load)."""
    return read_text(path, MAX_DEFINITION_FILE_BYTES, what="a definition file")


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(frontmatter, body); frontmatter is None when the file does not start with ``---``
    or the block is never closed (then the whole text is the body)."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for index, line in enumerate(lines[1:], start=1):
        if line.startswith("---"):
            return "".join(lines[1:index]), "".join(lines[index + 1:])
    return None, text


def parse_frontmatter(text: str) -> Frontmatter | None:
    """The file's frontmatter, parsed; None when it has no block.

    Raises ``yaml.YAMLError`` (the first attempt's, which points at the real
    problem) when the YAML fails even after the repair, and
    :class:`~covey.common.safe_yaml.YamlRefused` at once (no repair) for an alias bomb or a key written twice.
    """
    block, body = split_frontmatter(text)
    if block is None:
        return None
    try:
        return Frontmatter(load_yaml(block), body)
    except YamlRefused:
        raise  # quoting values changes no alias or key: a second attempt would only fail the same way
    except yaml.YAMLError as first:
        try:
            return Frontmatter(load_yaml(quote_problematic_values(block)), body, repaired=True)
        except yaml.YAMLError:
            raise first from None


def quote_problematic_values(block: str) -> str:
    """``block`` with each simple ``key: value`` line whose value YAML would misread
    turned into ``key: "value"`` (backslashes and double quotes escaped, so a literal
    ``\\n`` in the value stays two characters)."""
    return "\n".join(_quoted(line) for line in block.split("\n"))


def _quoted(line: str) -> str:
    match = _KEY_VALUE.match(line.rstrip("\r"))
    if match is None:
        return line
    key, value = match.groups()
    if _is_quoted(value) or not _YAML_SYNTAX.search(value) or _is_flow_list(value):
        return line
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'{key}: "{escaped}"'


def _is_flow_list(value: str) -> bool:
    """A value that parses on its own as a YAML flow list (``tools: ["Read", "Grep"]``): Claude
    Code's repair keeps it a list."""
    if not (value.startswith("[") and value.rstrip().endswith("]")):
        return False
    try:
        return isinstance(load_yaml(value), list)
    except yaml.YAMLError:
        return False


def _is_quoted(value: str) -> bool:
    return len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'"

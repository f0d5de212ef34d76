"""Markdown files with YAML frontmatter (agent definitions, skills): one splitter for both."""

from __future__ import annotations


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(frontmatter, body); frontmatter is None when the file does not start with ``---``
    or the block is never closed (then the whole text is the body)."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1:])
    return None, text

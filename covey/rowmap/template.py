"""A row's prompt: ``"Review {path} for bugs"`` filled with the row's fields by ``string.Formatter``.

A row's values are data: each is put in as text once and never read as a template again (a
value holding ``{other}`` stays as written). Every row's prompt starts with the template's
text before its first field, and every row's request has the same system prompt and tools
before that, so the Messages API's prompt cache serves the part rows share.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from covey.errors import UserError
from covey.rowmap.rows import Row, canonical

_FORMATTER = string.Formatter()


@dataclass(frozen=True)
class Template:
    """A prompt template and the row fields it names."""

    text: str
    fields: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> Template:
        """The template, checked: a bad brace or a field with no name is one error naming it."""
        if not text.strip():
            raise UserError("template: the prompt template is empty")
        try:
            parts = list(_FORMATTER.parse(text))
        except ValueError as exc:
            raise UserError(f"template {text!r}: {exc} (write {{{{ and }}}} for literal braces)") from None
        names: list[str] = []
        for _, field, _, _ in parts:
            if field is None:
                continue
            name = _root(field)
            if not name or name.isdigit():
                raise UserError(f"template {text!r}: every field needs a row field's name, as {{path}} (got {{{field}}})")
            if name not in names:
                names.append(name)
        return cls(text=text, fields=tuple(names))

    @property
    def prefix(self) -> str:
        """The fixed text before the first field: the same at the start of every row's prompt."""
        literal, *_ = next(iter(_FORMATTER.parse(self.text)), ("", None, None, None))
        return literal

    def render(self, row: Row) -> str:
        """The row's prompt; a field the row lacks is one error naming the row and the field."""
        missing = [name for name in self.fields if name not in row.data]
        if missing:
            has = ", ".join(sorted(row.data)) or "no fields"
            raise UserError(f"{row.where}: the template's field {missing[0]!r} is not in the row (it has {has})")
        try:
            return _FORMATTER.vformat(self.text, (), row.data)
        except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{row.where}: the template {self.text!r} does not fit the row: {exc}") from None


def _root(field: str) -> str:
    """The row field a template field starts from (``path`` of ``path.name`` or ``item[0]``)."""
    for stop in ".[":
        field = field.split(stop, 1)[0]
    return field


def row_prompt(template: Template | None, row: Row) -> str:
    """The prompt of one row: the template filled in, or (an agent definition with no template) the row as JSON."""
    return template.render(row) if template is not None else canonical(row.data)


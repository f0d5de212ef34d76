"""The tables covey's commands print (``covey ps``, ``tree``, ``team``, ``sessions``, ``status``, ``agents``),
drawn with rich: on a terminal in colour and fitted to its width, the long columns wrapping;
otherwise plain, one row a line without colour or trailing spaces, so a script (or a test) that
reads the output line by line sees the same columns whatever the width. rich is imported only
when a table is drawn: ``covey -p`` never pays for it.
"""

from __future__ import annotations

import io
import shutil
import sys
from typing import TYPE_CHECKING, Mapping, Sequence, Union

if TYPE_CHECKING:
    from rich.console import RenderableType

GAP = 2
"""Spaces between columns."""
PLAIN_WIDTH = 10_000
"""The width a plain table is laid out in: wide enough that no row wraps."""

Style = Union[str, Mapping[str, str]]
"""A column's rich style on a terminal: one for every cell, or one per cell's text (a status's colour)."""


def on_terminal() -> bool:
    """Whether covey's output goes to a terminal (else it is drawn plain)."""
    return sys.stdout.isatty()


def table_lines(rows: Sequence[Sequence[str]], styles: Sequence[Style] = (), whole: int = 1, indent: int = 2,
                terminal: bool | None = None) -> list[str]:
    """``rows`` as aligned columns, each line ``indent`` spaces in; ``styles``, the columns' styles.
    On a narrow terminal the first ``whole`` columns (an id, a type, a status) keep their width
    and the others wrap."""
    from rich.table import Table
    from rich.text import Text

    if not rows:
        return []
    table = Table.grid(padding=(0, GAP))
    for column in range(max(len(row) for row in rows)):
        widest = max((len(row[column]) for row in rows if column < len(row)), default=0)
        table.add_column(min_width=widest if column < whole else None, no_wrap=column < whole, overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell, _style(styles, column, cell)) for column, cell in enumerate(row)))
    return [" " * indent + line for line in drawn(table, terminal, shift=indent)]


def drawn(renderable: RenderableType, terminal: bool | None = None, shift: int = 0) -> list[str]:
    """The lines rich draws ``renderable`` as: for the terminal (its width less ``shift``, colour
    as rich finds the terminal able, ``NO_COLOR`` heeded), or plain."""
    from rich.console import Console

    terminal = on_terminal() if terminal is None else terminal
    out = io.StringIO()
    if terminal:
        columns = max(shutil.get_terminal_size().columns - shift, 20)
        console = Console(file=out, force_terminal=True, width=columns, highlight=False, emoji=False)
    else:
        console = Console(file=out, force_terminal=False, color_system=None, width=PLAIN_WIDTH, highlight=False,
                          emoji=False)
    console.print(renderable)
    return [line.rstrip() for line in out.getvalue().splitlines()]


def _style(styles: Sequence[Style], column: int, cell: str) -> str:
    if column >= len(styles):
        return ""
    style = styles[column]
    return style.get(cell, "") if isinstance(style, Mapping) else style

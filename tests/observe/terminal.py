"""A small terminal screen for tests: what a terminal of a given width shows after some output.

It keeps what the live tree's drawing relies on: text wraps at the width (a line one cell too
long takes two rows, which is what throws an in-place redraw off), the cursor moves up and
down, lines and the screen below the cursor are erased. Colours and cursor visibility are
ignored. ``wraps`` counts the lines that wrapped.
"""

from __future__ import annotations

import re

from rich.cells import cell_len

CSI = re.compile(r"\x1b\[([?0-9;]*)([A-Za-z])")
OTHER_ESCAPE = re.compile(r"\x1b[^\[]")


class Screen:
    def __init__(self, width: int) -> None:
        self.width = width
        self.rows: list[list[str]] = [[]]
        self.row = self.col = 0
        self.wraps = 0

    def feed(self, text: str) -> Screen:
        at = 0
        while at < len(text):
            if match := CSI.match(text, at):
                self._control(match.group(1), match.group(2))
                at = match.end()
            elif match := OTHER_ESCAPE.match(text, at):
                at = match.end()
            else:
                self._char(text[at])
                at += 1
        return self

    def lines(self) -> list[str]:
        """The screen's rows, trailing blanks dropped."""
        rows = ["".join(row).rstrip() for row in self.rows]
        while rows and not rows[-1]:
            rows.pop()
        return rows

    def _char(self, char: str) -> None:
        if char == "\r":
            self.col = 0
        elif char == "\n":  # a pty's output carries \n as \r\n; here it is both
            self._move_to(self.row + 1)
        else:
            width = cell_len(char)
            if self.col + width > self.width:  # the terminal wraps to the next row
                self.wraps += 1
                self._move_to(self.row + 1)
            row = self.rows[self.row]
            row.extend(" " * (self.col + width - len(row)))
            row[self.col] = char
            self.col += width

    def _move_to(self, row: int, col: int = 0) -> None:
        self.row, self.col = max(row, 0), col
        while len(self.rows) <= self.row:
            self.rows.append([])

    def _control(self, params: str, command: str) -> None:
        n = int(params) if params.isdigit() else None
        match command:
            case "A":
                self._move_to(self.row - (n or 1), min(self.col, self.width - 1))
            case "B":
                self._move_to(self.row + (n or 1), min(self.col, self.width - 1))
            case "F":
                self._move_to(self.row - (n or 1))
            case "E":
                self._move_to(self.row + (n or 1))
            case "G":
                self.col = (n or 1) - 1
            case "K":
                row = self.rows[self.row]
                self.rows[self.row] = [] if n == 2 else row[:self.col]
            case "J":
                self.rows[self.row] = self.rows[self.row][:self.col]
                del self.rows[self.row + 1:]
            case _:  # colours (m), cursor shown or hidden (h, l)
                pass

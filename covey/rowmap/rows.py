"""The rows of a map: a list of dicts, any iterable of them, a JSONL file, or a Ray Data dataset.

Each row keeps its place (``index``) and a stable ``key``: the SHA-256 of its canonical JSON,
with ``#n`` for the n-th repeat of the same row, so a map's journal finds a row again when the
input is read a second time, even reordered, and two equal rows stay two rows. A row is data
from a file or a caller: a line that is not a JSON object is one error naming its file and line.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from covey.errors import UserError


@dataclass(frozen=True)
class Row:
    """One row of a map: where it was, how the journal knows it, what it holds."""

    index: int
    key: str
    data: dict[str, Any]
    where: str
    """Where it came from, for messages: ``rows.jsonl:12`` or ``row 12``."""


def canonical(data: dict[str, Any]) -> str:
    """The row's JSON with sorted keys: the same row always hashes the same."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def keyed(items: Iterable[tuple[dict[str, Any], str]]) -> Iterator[Row]:
    """Rows from ``(data, where)`` pairs, each given its index and key."""
    seen: dict[str, int] = {}
    for index, (data, where) in enumerate(items):
        digest = hashlib.sha256(canonical(data).encode()).hexdigest()[:32]
        repeat = seen.get(digest, 0)
        seen[digest] = repeat + 1
        yield Row(index=index, key=digest if repeat == 0 else f"{digest}#{repeat}", data=data, where=where)


def from_values(values: Iterable[Any]) -> Iterator[Row]:
    """Rows from Python values: each a dict (a Ray Data row, a mapping), else a bad row named by its place."""
    def pairs() -> Iterator[tuple[dict[str, Any], str]]:
        for index, value in enumerate(values):
            if hasattr(value, "as_pydict"):  # a Ray Data row, as iter_rows() gives it in some versions
                value = value.as_pydict()
            if not isinstance(value, dict):
                try:
                    value = dict(value)
                except (TypeError, ValueError):
                    raise UserError(f"row {index}: a row must be a dict of fields, not {type(value).__name__}") from None
            yield {str(name): field for name, field in value.items()}, f"row {index}"
    return keyed(pairs())


def from_jsonl(path: str | Path) -> Iterator[Row]:
    """Rows from a JSONL file, one JSON object a line; blank lines are skipped."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{source}: cannot read the rows: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{source}: the rows are not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return keyed(_lines(source, text))


def _lines(source: Path, text: str) -> Iterator[tuple[dict[str, Any], str]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}: not a JSON object ({exc.msg} at column {exc.colno})") from None
        if not isinstance(data, dict):
            raise UserError(f"{where}: a row must be a JSON object, not {type(data).__name__}")
        yield data, where


def is_dataset(rows: Any) -> bool:
    """Whether ``rows`` is a Ray Data dataset (without importing Ray Data, an optional extra)."""
    return type(rows).__module__.startswith("ray.data") and hasattr(rows, "iter_rows")


def read_rows(rows: Any) -> list[Row]:
    """Every row of ``rows``: a path (str or Path) of a JSONL file, a Ray Data dataset, or an iterable of dicts."""
    if isinstance(rows, (str, Path)):
        return list(from_jsonl(rows))
    if is_dataset(rows):
        return list(from_values(rows.iter_rows()))
    if isinstance(rows, dict):
        raise UserError("rows: give a list (or any iterable) of dicts, not one dict")
    try:
        values = iter(rows)
    except TypeError:
        raise UserError(f"rows: give a list of dicts, a JSONL path or a Ray Data dataset, not {type(rows).__name__}") from None
    return list(from_values(values))

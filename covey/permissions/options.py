"""Command-line options judged by allow lists, as GNU ``getopt_long`` and git read them.

An option list says which options a command may take and which of them take a value.
Anything not on the list makes the command "not read-only": unknown means a person is
asked. A long option may be abbreviated (``--num`` for ``--number``): GNU and git accept
any unambiguous prefix and refuse an ambiguous one, so a prefix of an allowed option is
that option or an error, never a different, unlisted option. A prefix of no allowed
option is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Operands = Literal["paths", "text", "none", "pattern-then-paths", "filter-then-paths"]


@dataclass(frozen=True)
class Options:
    short: str = ""
    """Short flags without a value (``-l``), combinable (``-la``)."""
    short_valued: str = ""
    """Short options that take a value, attached (``-n5``) or as the next word."""
    long: frozenset[str] = frozenset()
    """Long options without a value (names without ``--``)."""
    long_valued: frozenset[str] = frozenset()
    """Long options that take a value (``--max-count=5`` or ``--max-count 5``)."""
    long_optional: frozenset[str] = frozenset()
    """Long options whose value is optional and only attached (``--color``, ``--color=never``)."""
    path_options: frozenset[str] = frozenset()
    """Options whose value is a file the command reads (``-f``, ``--file``): judged as paths."""
    dangerous: frozenset[str] = frozenset()
    """Known options that write or run something: an abbreviation that could stand for one is
    refused even where it also abbreviates an allowed option (git matches some options exactly
    and abbreviates others, so ambiguity is not always an error there)."""
    numeric: bool = False
    """``-5`` means a count (``head -5``)."""
    operands: Operands = "paths"
    max_operands: int | None = None


@dataclass
class Parsed:
    operands: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    """Every argument that names a file the command reads."""
    flags: set[str] = field(default_factory=set)
    """The options given, long ones by their full name (``--number``), short as ``-n``."""


def parse_options(spec: Options, args: list[str]) -> Parsed | None:
    """The operands and read paths of ``args``, or None if an option is not on the list."""
    parsed = Parsed()
    i, ended = 0, False
    while i < len(args):
        arg = args[i]
        i += 1
        if ended or arg == "-" or not arg.startswith("-"):
            parsed.operands.append(arg)
            continue
        if arg == "--":
            ended = True
            continue
        taken = _long(spec, arg, args, i, parsed) if arg.startswith("--") else _short(spec, arg, args, i, parsed)
        if taken is None:
            return None
        i += taken
    return parsed if _operands_ok(spec, parsed) else None


def _long(spec: Options, arg: str, args: list[str], i: int, parsed: Parsed) -> int | None:
    """How many following words the option takes (0 or 1), or None if it is not allowed."""
    name, eq, value = arg[2:].partition("=")
    full = _expand(spec, name)
    if full is None:
        return None
    parsed.flags.add("--" + full)
    if full in spec.long_valued:
        if not eq and i >= len(args):
            return None
        if "--" + full in spec.path_options:
            parsed.paths.append(value if eq else args[i])
        return 0 if eq else 1
    if eq and full not in spec.long_optional:
        return None
    return 0


def _expand(spec: Options, name: str) -> str | None:
    """The allowed long option ``name`` stands for: itself, or the one it abbreviates."""
    every = spec.long | spec.long_valued | spec.long_optional
    if name in every:
        return name
    if any(option.startswith(name) for option in spec.dangerous):
        return None
    matches = sorted(option for option in every if name and option.startswith(name))
    if not matches:
        return None
    valued = [m for m in matches if m in spec.long_valued]
    # Ambiguous among allowed options: the program refuses it or picks one of them; either is safe,
    # but a value must not be mistaken for an option, so a valued reading wins.
    return valued[0] if valued else matches[0]


def _short(spec: Options, arg: str, args: list[str], i: int, parsed: Parsed) -> int | None:
    letters = arg[1:]
    if spec.numeric and letters.isdigit():
        return 0
    for n, letter in enumerate(letters):
        if letter in spec.short_valued:
            parsed.flags.add("-" + letter)
            attached = letters[n + 1:]
            if not attached and i >= len(args):
                return None
            if "-" + letter in spec.path_options:
                parsed.paths.append(attached or args[i])
            return 0 if attached else 1
        if letter not in spec.short:
            return None
        parsed.flags.add("-" + letter)
    return 0


def _operands_ok(spec: Options, parsed: Parsed) -> bool:
    if spec.max_operands is not None and len(parsed.operands) > spec.max_operands:
        return False
    if spec.operands == "none":
        return not parsed.operands
    if spec.operands == "paths":
        parsed.paths.extend(o for o in parsed.operands if o != "-")
    elif spec.operands in ("pattern-then-paths", "filter-then-paths"):
        # grep's first operand is its pattern unless -e / -f gave one; jq's its filter.
        given = spec.operands == "pattern-then-paths" and parsed.flags & {"-e", "-f", "--regexp", "--file"}
        parsed.paths.extend(o for o in parsed.operands[0 if given else 1:] if o != "-")
    return True


def options(short: str = "", short_valued: str = "", long: str = "", long_valued: str = "",
            long_optional: str = "", path_options: str = "", dangerous: str = "", **kwargs) -> Options:
    """An option list written as space-separated names (``long="all number"``)."""
    return Options(short=short, short_valued=short_valued, long=frozenset(long.split()),
                   long_valued=frozenset(long_valued.split()), long_optional=frozenset(long_optional.split()),
                   path_options=frozenset(path_options.split()), dangerous=frozenset(dangerous.split()), **kwargs)

"""YAML from user files, loaded with its expansion bounded.

``yaml.safe_load`` builds an alias as a second reference to its anchor's object,
so a 450-byte "billion laughs" file loads at once, but every later walk over it
(JSON, pydantic, a deep copy) expands each reference: hundreds of millions of
elements, and the process dies. Aliases themselves are kept (a settings or rule
file may share a block legitimately); what is refused is a document whose
*expanded* size passes ``MAX_YAML_ELEMENTS``, or one that contains itself.
Counting reuses each object's count (by identity), so the check costs one pass
over what the file wrote, not over what it expands to.

The loader is PyYAML's safe one (no ``!!python/object`` tags) with two changes: a date
or time stays the text it was written as (``name: 2024-01-01`` is a string, not a
``datetime`` that no field takes and no JSON encoder writes), and a mapping that names
a key twice is refused (:class:`DuplicateKey`: which one of the two was meant?).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

MAX_YAML_ELEMENTS = 100_000
"""Scalars, lists and mappings a document may hold once its aliases are expanded."""

MAX_YAML_NESTING = 500
"""Open brackets a document may nest. PyYAML's scanner rechecks every open flow level at each
token, so 100,000 ``[`` take it ~30 s (a 1 MiB file, about an hour) before the recursion limit
is ever reached: the depth is counted first, in one linear pass."""

_BRACKETS = re.compile(r"[^\[\]{}]+")


class YamlRefused(yaml.YAMLError):
    """YAML that parses but is refused: quoting its values (the frontmatter repair) cannot fix it.

    A ``yaml.YAMLError``, so every reader that reports a bad YAML file (naming it)
    reports this one too.
    """


class YamlTooLarge(YamlRefused):
    """The document expands past the bound, contains itself, or nests too deeply."""


class DuplicateKey(YamlRefused):
    """A mapping names one key twice."""

    def __init__(self, message: str, key: str = "") -> None:
        super().__init__(message, key)
        self.key = key

    def __str__(self) -> str:
        return str(self.args[0])


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` without timestamps, refusing a key written twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[tuple[str, str]] = set()
        for key_node, _ in node.value:  # as written: a merge (<<: *base) may still be overridden
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                if (key_node.tag, key_node.value) in seen:
                    raise DuplicateKey(f"the key {key_node.value!r} appears twice in one mapping (line "
                                       f"{key_node.start_mark.line + 1}); refused", key_node.value)
                seen.add((key_node.tag, key_node.value))
        return super().construct_mapping(node, deep=deep)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)`` (dates kept as text), refused with :class:`YamlTooLarge` when it
    expands too far and :class:`DuplicateKey` when a mapping repeats a key."""
    if _bracket_depth(text) > MAX_YAML_NESTING:
        raise YamlTooLarge(f"the YAML nests more than {MAX_YAML_NESTING} brackets deep; refused")
    if _block_depth(text) > MAX_YAML_NESTING:
        raise YamlTooLarge(f"the YAML nests too deeply: more than {MAX_YAML_NESTING} levels of indentation and "
                           "dashes; refused")
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
        _Counter().count(data)
    except RecursionError:
        raise YamlTooLarge("the YAML nests too deeply to load") from None
    return data


def _block_depth(text: str) -> int:
    """A bound on a line's block nesting: its indentation plus the ``- `` it opens with (each
    level of a block needs one of them at least), counted so a parser's recursion never decides."""
    deepest = 0
    for line in text.splitlines():
        body = line.lstrip(" ")
        depth = len(line) - len(body)
        while body.startswith("- ") or body.startswith("-\t"):
            body, depth = body[2:].lstrip(" \t"), depth + 1
        deepest = max(deepest, depth)
    return deepest


def _bracket_depth(text: str) -> int:
    """The deepest run of unclosed ``[``/``{`` (brackets inside strings count too: a real
    file never comes near the bound, and over-counting only refuses sooner)."""
    depth = deepest = 0
    for char in _BRACKETS.sub("", text):
        depth = depth + 1 if char in "[{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


class _Counter:
    def __init__(self) -> None:
        self.sizes: dict[int, int] = {}
        self.open: set[int] = set()

    def count(self, node: Any) -> int:
        """The expanded size of ``node`` (each alias counted as a full copy of its anchor)."""
        if not isinstance(node, (list, dict)):
            return 1
        key = id(node)
        if key in self.sizes:  # an alias: its anchor was counted already
            return self.sizes[key]
        if key in self.open:
            raise YamlTooLarge("the YAML contains itself through an alias; refused")
        self.open.add(key)
        children = [part for pair in node.items() for part in pair] if isinstance(node, dict) else node
        size = 1 + sum(self.count(child) for child in children)
        self.open.discard(key)
        if size > MAX_YAML_ELEMENTS:  # a node is never smaller than its parts: the first too big one says it
            raise YamlTooLarge(
                f"the YAML expands to more than {MAX_YAML_ELEMENTS:,} elements once its aliases (*name) are "
                "repeated; refused (an alias bomb?)")
        self.sizes[key] = size
        return size

"""Frontmatter split and repaired as Claude Code does it (covey/common/frontmatter.py)."""

from __future__ import annotations

import pytest
import yaml

from covey.common.frontmatter import parse_frontmatter, quote_problematic_values, split_frontmatter


def test_the_first_line_starting_with_three_dashes_closes_the_block():
    assert split_frontmatter("---\nname: a\n-----\nbody\n") == ("name: a\n", "body\n")
    assert split_frontmatter("---\nname: a\n--- \nbody\n") == ("name: a\n", "body\n")
    assert split_frontmatter("---\r\nname: a\r\n---\r\nbody") == ("name: a\r\n", "body")
    assert split_frontmatter("----\nname: a\n---\n") == (None, "----\nname: a\n---\n")


def test_values_yaml_would_misread_are_quoted_on_the_retry():
    block = 'name: x\ndescription: Use when: a "quoted" thing\\n next\ntools: [Read, Grep]\n  indented: a: b\nplain: text'
    assert quote_problematic_values(block).split("\n") == [
        "name: x",
        'description: "Use when: a \\"quoted\\" thing\\\\n next"',
        "tools: [Read, Grep]",  # a flow list already: kept, as Claude Code keeps it
        "  indented: a: b",
        "plain: text",
    ]
    assert quote_problematic_values("a: 'it: is'\nb: \"so: it\"\nc: 12:30\nd: http://x") == (
        "a: 'it: is'\nb: \"so: it\"\nc: 12:30\nd: http://x")


def test_a_well_formed_block_parses_first_time_and_a_broken_one_after_repair():
    good = parse_frontmatter("---\nname: a\ntools: [Read, Grep]\n---\nbody")
    assert (good.data, good.body, good.repaired) == ({"name": "a", "tools": ["Read", "Grep"]}, "body", False)
    fixed = parse_frontmatter("---\nname: a\ndescription: Use when: asked\\nlater\n---\nbody")
    assert fixed.repaired and fixed.data["description"] == "Use when: asked\\nlater"  # two characters, as written
    assert parse_frontmatter("no block") is None


def test_the_repair_keeps_a_flow_list_a_list():
    fixed = parse_frontmatter('---\nname: a\ndescription: Use when: asked\ntools: ["Read", "Grep"]\n'
                              'skills: [one, [two\n---\nbody')
    assert fixed.repaired and fixed.data["tools"] == ["Read", "Grep"]
    assert fixed.data["skills"] == "[one, [two"  # not a list on its own: quoted as before


def test_yaml_the_repair_cannot_fix_raises_the_first_error():
    with pytest.raises(yaml.YAMLError, match="line 2"):
        parse_frontmatter('---\nname: a\ndescription: "never closed\n---\nbody')

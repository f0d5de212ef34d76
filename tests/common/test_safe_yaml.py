"""YAML from user files: aliases load, but an alias bomb or a self-containing document is refused."""

import sys
import time

import pytest
import yaml

from covey.common.frontmatter import parse_frontmatter
from covey.common.safe_yaml import MAX_YAML_ELEMENTS, YamlTooLarge, load_yaml

# Nine levels of nine aliases: 9**9 = 387,420,489 strings once expanded, in about 450 bytes.
BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['lol'] * 9)}]\n"
    for prev, name in zip([None, *"abcdefgh"], "abcdefghi")
)


def test_the_bomb_is_small_and_expands_to_hundreds_of_millions():
    assert len(BOMB) < 500


def test_an_alias_bomb_is_refused_quickly():
    started = time.monotonic()
    with pytest.raises(YamlTooLarge, match=f"more than {MAX_YAML_ELEMENTS:,} elements"):
        load_yaml(BOMB)
    assert time.monotonic() - started < 2


def test_an_alias_bomb_in_frontmatter_is_refused_without_the_repair_attempt():
    with pytest.raises(YamlTooLarge):
        parse_frontmatter(f"---\nname: x\n{BOMB}---\nbody\n")


def test_a_document_that_contains_itself_is_refused():
    with pytest.raises(YamlTooLarge, match="contains itself"):
        load_yaml("a: &a [1, *a]\n")


def test_nesting_past_the_recursion_limit_is_a_yaml_error_not_a_crash():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # Python's default: another test's library (hypothesis) may have raised it
    try:
        with pytest.raises(YamlTooLarge, match="nests too deeply"):
            load_yaml("- " * 3000 + "x")  # block sequences: no brackets to count
    finally:
        sys.setrecursionlimit(limit)


def test_deep_brackets_are_refused_before_the_scanner_sees_them():
    # PyYAML's scanner is quadratic in open flow levels: 100,000 "[" took it ~30 s.
    with pytest.raises(YamlTooLarge, match="more than 500 brackets deep"):
        load_yaml("[" * 100_000)
    assert load_yaml("[" * 400 + "]" * 400) is not None  # deep but under the bound still loads


def test_ordinary_aliases_still_load():
    assert load_yaml("base: &b {model: haiku}\nother: *b\n") == {"base": {"model": "haiku"}, "other": {"model": "haiku"}}


def test_a_key_written_twice_is_refused_naming_it_but_a_merge_may_be_overridden():
    from covey.common.safe_yaml import DuplicateKey

    with pytest.raises(DuplicateKey, match="'model' appears twice") as caught:
        load_yaml("name: a\nmodel: x\nmodel: y\n")
    assert caught.value.key == "model" and type(caught.value)(*caught.value.args).key == "model"  # pickles
    assert load_yaml("base: &b {x: 1, y: 2}\nmine:\n  <<: *b\n  x: 3\n")["mine"] == {"x": 3, "y": 2}


def test_dates_and_times_stay_text_and_python_tags_are_never_built():
    assert load_yaml("a: 2024-01-01\nb: 2024-01-01T10:00:00Z\n") == {"a": "2024-01-01", "b": "2024-01-01T10:00:00Z"}
    with pytest.raises(yaml.YAMLError, match="python/object"):
        load_yaml("a: !!python/object/apply:os.system [id]\n")

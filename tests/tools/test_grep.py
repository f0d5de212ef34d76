import os
import shutil
from pathlib import Path

import pytest

from covey.tools.base import ToolContext
from covey.tools.grep import Grep, GrepInput

BACKENDS = [
    pytest.param(False, id="python"),
    pytest.param(True, id="ripgrep", marks=pytest.mark.skipif(not shutil.which("rg"), reason="no rg")),
]


@pytest.fixture(params=BACKENDS)
def grep(request, ctx):
    tool = Grep(use_ripgrep=request.param)

    async def run(**kw):
        return await tool.run(GrepInput.model_validate(kw), ctx)

    return run


@pytest.fixture
def tree(tmp_path):
    files = {
        "a.py": "import os\ndef foo():\n    return FOO\n",
        "b.py": "x = 1\ny = 2\nfoo = 3\nz = 4\nw = 5\n",
        "notes.md": "foo in markdown\n",
        "pkg/c.js": "const foo = 1;\n",
        ".git/config": "foo\n",
    }
    for i, (name, text) in enumerate(files.items()):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_000 + i, 1_000 + i))
    (tmp_path / "blob.bin").write_bytes(b"foo\0foo")
    return tmp_path


async def test_files_with_matches_default_newest_first_skips_git_and_binary(grep, tree):
    result = await grep(pattern="foo")
    assert result.content.splitlines() == [
        "Found 4 files", str(tree / "pkg/c.js"), str(tree / "notes.md"),
        str(tree / "b.py"), str(tree / "a.py"),
    ]


async def test_content_with_line_numbers_and_context(grep, tree):
    result = await grep(pattern="^foo", path="b.py", output_mode="content", **{"-B": 1, "-A": 1})
    path = tree / "b.py"
    assert result.content.splitlines() == [f"{path}-2-y = 2", f"{path}:3:foo = 3", f"{path}-4-z = 4"]


async def test_context_separator_and_C_alias(grep, tree):
    (tree / "s.txt").write_text("hit\n1\n2\n3\n4\nhit\n")
    result = await grep(pattern="hit", path="s.txt", output_mode="content", context=1)
    path = tree / "s.txt"
    assert result.content.splitlines() == [f"{path}:1:hit", f"{path}-2-1", "--", f"{path}-5-4", f"{path}:6:hit"]
    again = await grep(pattern="hit", path="s.txt", output_mode="content", **{"-C": 1})
    assert again.content == result.content


async def test_case_insensitive_only_matching_and_no_numbers(grep, tree):
    result = await grep(pattern="fo+", path="a.py", output_mode="content", **{"-i": True, "-o": True})
    assert result.content.splitlines() == [f"{tree / 'a.py'}:2:foo", f"{tree / 'a.py'}:3:FOO"]
    plain = await grep(pattern="def", path="a.py", output_mode="content", **{"-n": False})
    assert plain.content == f"{tree / 'a.py'}:def foo():"


async def test_count_glob_and_type(grep, tree):
    counts = await grep(pattern="o", output_mode="count", glob="*.{py,md}")
    assert sorted(counts.content.splitlines()) == sorted(
        [f"{tree / 'a.py'}:2", f"{tree / 'b.py'}:1", f"{tree / 'notes.md'}:1"]
    )
    typed = await grep(pattern="foo", type="js")
    assert typed.content.splitlines()[1:] == [str(tree / "pkg/c.js")]


async def test_head_limit_and_offset_page_results(grep, tree):
    (tree / "n.txt").write_text("".join(f"n{i}\n" for i in range(10)))
    page = await grep(pattern="n", path="n.txt", output_mode="content", head_limit=3, offset=2)
    lines = page.content.splitlines()
    assert [line.rsplit(":", 1)[1] for line in lines[:3]] == ["n2", "n3", "n4"]
    assert "offset=5" in lines[3]


async def test_multiline_matches_span_lines(grep, tree):
    single = await grep(pattern="def foo.*\\n.*return", path="a.py", output_mode="content")
    # Without multiline no match crosses a newline (rg even refuses a literal \n).
    assert single.content == "No matches found." or "multiline" in single.content
    multi = await grep(pattern="def foo.*\\n.*return", path="a.py", output_mode="content", multiline=True)
    assert [line.split(":")[1] for line in multi.content.splitlines()] == ["2", "3"]


async def test_no_match_bad_regex_and_missing_path(grep, tree):
    assert (await grep(pattern="zzz")).content == "No matches found."
    assert (await grep(pattern="(unclosed")).is_error
    missing = await grep(pattern="x", path="nowhere")
    assert missing.is_error and str(tree / "nowhere") in missing.content


def test_aliases_accept_claude_code_names_and_python_names():
    by_alias = GrepInput.model_validate({"pattern": "x", "-i": True, "-C": 2, "type": "py"})
    assert by_alias.ignore_case and by_alias.around == 2 and by_alias.file_type == "py"
    assert GrepInput(pattern="x", ignore_case=True).ignore_case
    with pytest.raises(ValueError):
        GrepInput.model_validate({"pattern": "x", "--ignore-case": True})


def test_permission_subject_is_search_root(ctx, tmp_path):
    assert Grep().permission_subject(GrepInput(pattern="x", path="src"), ctx) == str(tmp_path / "src")


async def test_line_numbers_count_newlines_only(grep, tree):
    (tree / "ff.txt").write_text("a\fb\r\nneedle\n")
    result = await grep(pattern="needle", path="ff.txt", output_mode="content")
    assert result.content == f"{tree / 'ff.txt'}:2:needle"


# -- the run's environment: rg runs with it, found on its PATH ---------------------------

def _fake_rg(tmp_path) -> Path:
    """An ``rg`` that prints the ``FOO`` it was given, as if it were a match."""
    bin_dir = tmp_path / "client-bin"
    bin_dir.mkdir()
    (bin_dir / "rg").write_text('#!/bin/sh\necho "$FOO.py"\n')
    (bin_dir / "rg").chmod(0o755)
    return bin_dir


async def test_rg_runs_with_the_runs_env_and_path(tmp_path, monkeypatch):
    monkeypatch.delenv("FOO", raising=False)
    ctx = ToolContext(agent_id="agent-test", cwd=tmp_path, env={"PATH": str(_fake_rg(tmp_path)), "FOO": "bar"})
    result = await Grep(use_ripgrep=True).run(GrepInput(pattern="x"), ctx)
    assert result.content.splitlines()[-1].endswith("bar.py")


async def test_without_rg_on_the_runs_path_the_python_search_answers(tmp_path):
    (tmp_path / "a.py").write_text("needle\n")
    ctx = ToolContext(agent_id="agent-test", cwd=tmp_path, env={"PATH": str(tmp_path / "empty")})
    result = await Grep(use_ripgrep=True).run(GrepInput(pattern="needle"), ctx)
    assert not result.is_error and "a.py" in result.content

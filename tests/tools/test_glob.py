import os

from covey.tools.glob import Glob, GlobInput, expand_braces


async def glob(ctx, **kw):
    return await Glob().run(GlobInput(**kw), ctx)


def make(path, mtime):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    os.utime(path, (mtime, mtime))


async def test_recursive_pattern_newest_first_absolute(ctx, tmp_path):
    make(tmp_path / "old.py", 1_000)
    make(tmp_path / "src/pkg/new.py", 3_000)
    make(tmp_path / "src/mid.py", 2_000)
    make(tmp_path / "src/notes.md", 4_000)
    result = await glob(ctx, pattern="**/*.py")
    assert result.content.splitlines() == [
        str(tmp_path / "src/pkg/new.py"), str(tmp_path / "src/mid.py"), str(tmp_path / "old.py"),
    ]


async def test_path_and_braces(ctx, tmp_path):
    make(tmp_path / "src/a.ts", 1_000)
    make(tmp_path / "src/b.tsx", 2_000)
    make(tmp_path / "other/c.ts", 3_000)
    result = await glob(ctx, pattern="*.{ts,tsx}", path="src")
    assert result.content.splitlines() == [str(tmp_path / "src/b.tsx"), str(tmp_path / "src/a.ts")]


async def test_capped_at_100_with_note(ctx, tmp_path):
    for i in range(105):
        make(tmp_path / f"f{i:03}.txt", 1_000 + i)
    lines = (await glob(ctx, pattern="*.txt")).content.splitlines()
    assert len(lines) == 101
    assert lines[0] == str(tmp_path / "f104.txt")
    assert "5 more files" in lines[-1]


async def test_missing_directory_and_no_match(ctx, tmp_path):
    missing = await glob(ctx, pattern="*", path="nowhere")
    assert missing.is_error and str(tmp_path / "nowhere") in missing.content
    none = await glob(ctx, pattern="*.rs")
    assert not none.is_error and "No files" in none.content


def test_expand_braces_nested():
    assert expand_braces("a.{py,{md,txt}}") == ["a.py", "a.md", "a.txt"]
    assert expand_braces("plain") == ["plain"]


def test_permission_subject_is_search_root(ctx, tmp_path):
    assert Glob().permission_subject(GlobInput(pattern="*"), ctx) == str(tmp_path)
    assert Glob().permission_subject(GlobInput(pattern="*", path="src"), ctx) == str(tmp_path / "src")

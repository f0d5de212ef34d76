"""``@path`` in a prompt: which tokens name files, what is attached and what the model reads."""

from __future__ import annotations

from covey.definitions.mentions import MAX_LINES, file_mentions, mention_blocks


def test_an_absolute_a_relative_and_a_quoted_path_are_attached_once_each(tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\n")
    (tmp_path / "with space.md").write_text("beta")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("gamma")
    prompt = f'read @notes.txt, @{outside} and @"{tmp_path / "with space.md"}" then @notes.txt again'

    found = file_mentions(prompt, str(tmp_path))

    assert [m["filename"] for m in found] == [str(tmp_path / "notes.txt"), str(outside), str(tmp_path / "with space.md")]
    first = found[0]
    assert first["type"] == "file" and first["displayPath"] == "notes.txt"
    assert first["content"] == {"type": "text", "file": {"filePath": str(tmp_path / "notes.txt"), "content": "alpha\n",
                                                         "numLines": 2, "startLine": 1, "totalLines": 2}}


def test_what_names_no_readable_file_stays_text(tmp_path):
    (tmp_path / "folder").mkdir()
    prompt = "ask @agent-helper about @folder, mail me@example.com, see @missing.txt"
    assert file_mentions(prompt, str(tmp_path)) == []


def test_a_long_file_is_cut_to_the_read_tools_first_lines(tmp_path):
    (tmp_path / "long.txt").write_text("x\n" * (MAX_LINES + 10))
    [long] = file_mentions("@long.txt", str(tmp_path))
    assert long["content"]["file"]["numLines"] == MAX_LINES
    assert long["content"]["file"]["content"].count("\n") == MAX_LINES - 1


def test_the_model_reads_each_file_as_a_read_call_and_its_numbered_result(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo")
    blocks = mention_blocks(file_mentions("@a.txt", str(tmp_path)))
    path = tmp_path / "a.txt"
    assert [b["text"] for b in blocks] == [
        f'<system-reminder>\nCalled the Read tool with the following input: {{"file_path":"{path}"}}\n</system-reminder>',
        "<system-reminder>\nResult of calling the Read tool:\n1\tone\n2\ttwo\n</system-reminder>",
    ]

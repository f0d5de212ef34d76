"""NotebookEdit: replace, insert and delete one cell; the notebook must have been read; bad input."""

import json

import pytest

from covey.tools.notebook_edit import NotebookEdit, NotebookEditInput
from covey.tools.read import Read, ReadInput


def write_notebook(path, cells, minor=5):
    path.write_text(json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "python3"}},
                                "nbformat": 4, "nbformat_minor": minor}, indent=1) + "\n")


def code(ident, source, outputs=()):
    return {"cell_type": "code", "id": ident, "metadata": {}, "execution_count": 3, "source": source,
            "outputs": list(outputs)}


@pytest.fixture
async def nb(ctx, tmp_path):
    path = tmp_path / "nb.ipynb"
    write_notebook(path, [code("a", "x = 1", [{"output_type": "stream", "name": "stdout", "text": "old"}]),
                          {"cell_type": "markdown", "id": "b", "metadata": {}, "source": "Notes"}])
    assert not (await Read().run(ReadInput(file_path=str(path)), ctx)).is_error
    return path


async def edit(ctx, path, **kw):
    return await NotebookEdit().run(NotebookEditInput(notebook_path=str(path), **kw), ctx)


def cells(path):
    return json.loads(path.read_text())["cells"]


async def test_replace_changes_the_source_and_clears_a_code_cells_outputs(ctx, nb):
    result = await edit(ctx, nb, cell_id="a", new_source="x = 2")
    assert not result.is_error and result.content == "Updated cell a with x = 2"
    cell = cells(nb)[0]
    assert cell["source"] == "x = 2" and cell["outputs"] == [] and cell["execution_count"] is None
    assert cells(nb)[1]["source"] == "Notes"  # the rest is untouched
    assert json.loads(nb.read_text())["metadata"] == {"kernelspec": {"name": "python3"}}


async def test_insert_after_a_cell_or_first_and_delete(ctx, nb):
    after = await edit(ctx, nb, cell_id="a", new_source="y = 3", cell_type="code", edit_mode="insert")
    assert not after.is_error
    first = await edit(ctx, nb, new_source="# Top", cell_type="markdown", edit_mode="insert")
    assert not first.is_error
    assert [c["source"] for c in cells(nb)] == ["# Top", "x = 1", "y = 3", "Notes"]
    assert all(c.get("id") for c in cells(nb)) and cells(nb)[2]["outputs"] == []
    deleted = await edit(ctx, nb, cell_id="b", new_source="", edit_mode="delete")
    assert deleted.content == "Deleted cell b"
    assert [c["source"] for c in cells(nb)] == ["# Top", "x = 1", "y = 3"]


async def test_cells_without_ids_go_by_their_index(ctx, tmp_path):
    path = tmp_path / "old.ipynb"
    write_notebook(path, [{"cell_type": "code", "metadata": {}, "execution_count": None, "source": "a", "outputs": []}], minor=4)
    await Read().run(ReadInput(file_path=str(path)), ctx)
    assert not (await edit(ctx, path, cell_id="cell-0", new_source="b")).is_error
    assert cells(path)[0]["source"] == "b" and "id" not in cells(path)[0]


async def test_bad_input_is_an_error_and_leaves_the_file_alone(ctx, nb, tmp_path):
    before = nb.read_text()
    for kw, why in (({"cell_id": "zzz", "new_source": "q"}, "not found"),
                    ({"new_source": "q", "edit_mode": "insert"}, "cell_type is required"),
                    ({"new_source": "q"}, "cell_id is required")):
        result = await edit(ctx, nb, **kw)
        assert result.is_error and why in result.content, kw
    assert nb.read_text() == before
    (tmp_path / "a.py").write_text("x")
    assert "not a Jupyter notebook" in (await edit(ctx, tmp_path / "a.py", cell_id="a", new_source="q")).content
    assert "does not exist" in (await edit(ctx, tmp_path / "none.ipynb", cell_id="a", new_source="q")).content
    with pytest.raises(ValueError):
        NotebookEditInput(notebook_path="x.ipynb", new_source="q", edit_mode="append")


async def test_an_unread_notebook_is_not_edited(ctx, tmp_path):
    path = tmp_path / "fresh.ipynb"
    write_notebook(path, [code("a", "x")])
    result = await edit(ctx, path, cell_id="a", new_source="y")
    assert result.is_error and "has not been read yet" in result.content


def test_permission_is_the_edit_familys():
    from covey.permissions.rules import parse_rule, PathContext
    from pathlib import Path

    rule = parse_rule("Edit(//proj/**)", source="cliArg")  # `//`: an absolute path
    where = PathContext(Path("/proj"), Path("/home"), Path("/proj"))
    subject = NotebookEdit().permission_subject(NotebookEditInput(notebook_path="/proj/nb.ipynb", new_source=""))
    assert rule.matches("NotebookEdit", subject, where, allowing=True)

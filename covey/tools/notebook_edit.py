"""NotebookEdit: replace, insert or delete one cell of a Jupyter notebook (.ipynb).

The notebook's JSON is edited directly rather than through nbformat: only the touched
cell changes, everything else (metadata, other cells' outputs, key order) is written back
as it was, in Jupyter's own layout (one-space indent), so a diff shows just that cell.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from covey.common import atomic
from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult
from covey.tools.read import abs_path, record_read, subject_path, unread_error
from covey.tools.read_media import MediaError, cell_id, load_notebook


class NotebookEditInput(ToolInput):
    notebook_path: str = Field(description="Path of the .ipynb file (absolute, or relative to the cwd).")
    cell_id: str | SkipJsonSchema[None] = Field(
        None, description="Id of the cell to edit (as Read shows it). For insert: the new cell goes after "
        "it, or first when omitted.")
    new_source: str = Field(description="The cell's new source (ignored for delete).")
    cell_type: Literal["code", "markdown"] | SkipJsonSchema[None] = Field(
        None, description="The cell's type; required for insert, defaults to the current one for replace.")
    edit_mode: Literal["replace", "insert", "delete"] | SkipJsonSchema[None] = Field(
        None, description="replace (default), insert, or delete.")


class NotebookEdit(Tool):
    name = "NotebookEdit"
    path_rules = "Edit"
    primary_field = "notebook_path"
    background = True
    activity = ("Editing notebook", "notebook_path")
    description = (
        "Edit a Jupyter notebook (.ipynb) one cell at a time: replace a cell's source, insert a new "
        "cell after `cell_id`, or delete a cell. Read the notebook first to see its cell ids. A "
        "replaced code cell loses its outputs."
    )
    input_model = NotebookEditInput

    def permission_subject(self, input: NotebookEditInput, ctx: ToolContext | None = None) -> str | None:
        return subject_path(input.notebook_path, ctx)

    async def run(self, input: NotebookEditInput, ctx: ToolContext) -> ToolResult:
        path = abs_path(ctx, input.notebook_path)
        return await asyncio.to_thread(_edit, ctx, path, input)


def _edit(ctx: ToolContext, path: Path, input: NotebookEditInput) -> ToolResult:
    if path.suffix.lower() != ".ipynb":
        return ToolResult.error(f"{path} is not a Jupyter notebook (.ipynb); use Edit for other files.")
    if not path.is_file():
        return ToolResult.error(f"Notebook does not exist: {path}")
    if refusal := unread_error(ctx, path):
        return refusal
    try:
        notebook = load_notebook(path)
        message = _apply(notebook, input)
    except MediaError as exc:
        return ToolResult.error(str(exc))
    try:
        atomic.write_text(path, json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
    except OSError as e:
        return ToolResult.error(atomic.failure(path, e))
    record_read(ctx, path)  # the agent knows this version: it just wrote it
    return ToolResult(content=message, data={"notebook_path": str(path), "cell_id": input.cell_id,
                                             "edit_mode": input.edit_mode or "replace"})


def _apply(notebook: dict[str, Any], input: NotebookEditInput) -> str:
    cells: list[dict[str, Any]] = notebook["cells"]
    mode = input.edit_mode or "replace"
    index = _index(cells, input.cell_id) if input.cell_id is not None else None
    if mode == "insert":
        if input.cell_type is None:
            raise MediaError("cell_type is required to insert a cell (code or markdown).")
        cell = _new_cell(notebook, input.cell_type, input.new_source)
        cells.insert(0 if index is None else index + 1, cell)
        return f"Inserted cell {cell_id(cell, cells.index(cell))} with {input.new_source}"
    if index is None:
        raise MediaError(f"cell_id is required to {mode} a cell.")
    if mode == "delete":
        cells.pop(index)
        return f"Deleted cell {input.cell_id}"
    cell = cells[index]
    if input.cell_type and input.cell_type != cell.get("cell_type"):
        cells[index] = cell = {**_new_cell(notebook, input.cell_type, ""), **({"id": cell["id"]} if "id" in cell else {})}
    cell["source"] = input.new_source
    if cell.get("cell_type") == "code":
        cell["execution_count"], cell["outputs"] = None, []  # old outputs no longer match the code
    return f"Updated cell {input.cell_id} with {input.new_source}"


def _index(cells: list[dict[str, Any]], wanted: str) -> int:
    for index, cell in enumerate(cells):
        if cell_id(cell, index) == wanted:
            return index
    raise MediaError(f"Cell with id {wanted!r} not found in the notebook ({len(cells)} cells); Read it to see the ids.")


def _new_cell(notebook: dict[str, Any], cell_type: str, source: str) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": cell_type, "metadata": {}, "source": source}
    if (notebook.get("nbformat") or 0, notebook.get("nbformat_minor") or 0) >= (4, 5):
        cell["id"] = uuid.uuid4().hex[:8]  # nbformat 4.5 gives every cell an id
    if cell_type == "code":
        cell.update(execution_count=None, outputs=[])
    return cell

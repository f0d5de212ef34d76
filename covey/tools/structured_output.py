"""StructuredOutput: how the main agent gives its final answer when the run has ``--json-schema``
(Claude Code's tool of that name; docs/cli.md#structured-output).

The tool's input schema is the user's schema. A call whose input validates ends the run: the
loop sees ``answer`` set and closes the turn with it as the result's ``structured_output``. A
call that does not validate gets an error result naming each mismatch (``jsonschema``, which
Ray already installs), and the model may try again; an answer that ends without any call gets
``REMINDER`` instead of ending the run, up to ``MAX_RETRIES`` times
(``error_max_structured_output_retries`` after that, as Claude Code).
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict

from covey.errors import UserError
from covey.tools.base import Tool, ToolContext, ToolResult

STRUCTURED_OUTPUT = "StructuredOutput"
MAX_RETRIES = 5
"""Answers without a valid StructuredOutput call the run takes before it ends in error."""
ACCEPTED = "Structured output provided successfully"
REMINDER = (f"This run must end with a call to the {STRUCTURED_OUTPUT} tool: its input is the final answer "
            "and must match the tool's schema. Call it now with your answer.")
SYSTEM_NOTE = (f"\n\nWhen you have finished the task, give your final answer by calling the {STRUCTURED_OUTPUT} "
               "tool exactly once, with input that matches its schema. The run ends with that call.")
_MAX_ERRORS = 10
GAVE_UP = f"The model did not give a final answer matching the schema through {STRUCTURED_OUTPUT} after {MAX_RETRIES} tries"


def check_schema(schema: Any, flag: str = "--json-schema") -> dict[str, Any]:
    """``schema`` if it is a JSON Schema object a tool may take as its input schema; else why not."""
    if not isinstance(schema, dict):
        raise UserError(f"{flag}: the schema must be a JSON object, not {type(schema).__name__}")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        raise UserError(f"{flag}: not a valid JSON Schema: {exc.message}") from None
    if schema.get("type", "object") != "object":
        # The Messages API takes only object schemas as a tool's input_schema.
        raise UserError(f"{flag}: the schema's type must be \"object\" (a tool's input is an object)")
    return {"type": "object", **schema}


class AnyInput(BaseModel):
    """Whatever the model sends: the user's schema decides, not a pydantic model."""

    model_config = ConfigDict(extra="allow")


class StructuredOutput(Tool):
    name = STRUCTURED_OUTPUT
    description = ("Give the final answer of this run as structured data. Call it once, at the end, with input "
                   "that matches the schema; the run ends with it.")
    input_model = AnyInput
    read_only = True
    coordination = True

    def __init__(self, schema: dict[str, Any]) -> None:
        self.input_schema = schema
        self.validator = jsonschema.validators.validator_for(schema)(schema)
        self.answer: dict[str, Any] | None = None
        """The first input that validated: the run's ``structured_output``."""
        self.misses = 0
        """Calls that did not validate, and answers that came without a call."""

    def remind(self) -> str | None:
        """After an answer without a valid call: the reminder that sends the model back, or None
        once ``MAX_RETRIES`` misses are spent (the run then ends in error)."""
        self.misses += 1
        return REMINDER if self.misses <= MAX_RETRIES else None

    def exhausted(self) -> bool:
        return self.answer is None and self.misses > MAX_RETRIES

    def schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    async def run(self, input: AnyInput, ctx: ToolContext) -> ToolResult:
        value = input.model_dump()
        errors = sorted(self.validator.iter_errors(value), key=lambda error: list(error.absolute_path))
        if errors:
            self.misses += 1
            lines = [f"- {_where(error)}: {error.message}" for error in errors[:_MAX_ERRORS]]
            more = f"\n- and {len(errors) - _MAX_ERRORS} more" if len(errors) > _MAX_ERRORS else ""
            return ToolResult.error("The input does not match the schema:\n" + "\n".join(lines) + more
                                    + "\nCall StructuredOutput again with corrected input.")
        if self.answer is None:
            self.answer = value
        return ToolResult(content=ACCEPTED, data=value)


def _where(error: Any) -> str:
    path = "".join(f"[{json.dumps(part)}]" for part in error.absolute_path)
    return f"input{path}" if path else "input"

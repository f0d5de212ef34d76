"""StructuredOutput: how the main agent gives its final answer when the run has ``--json-schema``
(Claude Code's tool of that name; docs/cli.md#structured-output).

The tool's input schema is the user's schema. A call whose input validates ends the run: the
loop sees ``answer`` set and closes the turn with it as the result's ``structured_output``. A
call that does not validate gets an error result naming each mismatch (``jsonschema``, which
Ray already installs), and the model may try again: ``MAX_ATTEMPTS`` such calls end the run in
``error_max_structured_output_retries``. An answer that ends without any call is sent back once
with ``REMINDER``; a second such answer ends the run as it is, without ``structured_output``.
That is what Claude Code 2.1.332 does (measured against its bundled CLI).
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
MAX_ATTEMPTS = 5
"""Calls that do not validate before the run ends in error (Claude Code's five)."""
MAX_REMINDERS = 1
"""Answers without a call sent back with ``REMINDER`` before the run ends as it is (Claude Code's one)."""
ACCEPTED = "Structured output provided successfully"
REMINDER = (f"This run must end with a call to the {STRUCTURED_OUTPUT} tool: its input is the final answer "
            "and must match the tool's schema. Call it now with your answer.")
SYSTEM_NOTE = (f"\n\nWhen you have finished the task, give your final answer by calling the {STRUCTURED_OUTPUT} "
               "tool exactly once, with input that matches its schema. The run ends with that call.")
_MAX_ERRORS = 10
GAVE_UP = f"Failed to provide valid structured output after {MAX_ATTEMPTS} attempts"


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
        """Calls that did not validate."""
        self.reminded = 0
        self.last_error = ""

    def remind(self) -> str | None:
        """After an answer without a call: the reminder that sends the model back, or None once
        it was sent (the run then ends with that answer)."""
        self.reminded += 1
        return REMINDER if self.reminded <= MAX_REMINDERS else None

    def exhausted(self) -> bool:
        return self.answer is None and self.misses >= MAX_ATTEMPTS

    def gave_up(self) -> str:
        return f"{GAVE_UP} - last {STRUCTURED_OUTPUT} error: {self.last_error}"

    def schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    async def run(self, input: AnyInput, ctx: ToolContext) -> ToolResult:
        value = input.model_dump()
        errors = sorted(self.validator.iter_errors(value), key=lambda error: list(error.absolute_path))
        if errors:
            self.misses += 1
            lines = [f"- {_where(error)}: {error.message}" for error in errors[:_MAX_ERRORS]]
            self.last_error = f"{_where(errors[0])}: {errors[0].message}"
            more = f"\n- and {len(errors) - _MAX_ERRORS} more" if len(errors) > _MAX_ERRORS else ""
            return ToolResult.error("The input does not match the schema:\n" + "\n".join(lines) + more
                                    + "\nCall StructuredOutput again with corrected input.")
        if self.answer is None:
            self.answer = value
        return ToolResult(content=ACCEPTED, data=value)


def _where(error: Any) -> str:
    path = "".join(f"[{json.dumps(part)}]" for part in error.absolute_path)
    return f"input{path}" if path else "input"

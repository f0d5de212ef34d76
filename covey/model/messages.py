"""The assistant message a model returns, in the Messages API's own shape.

covey's loop reads replies through these small pydantic models rather than
``anthropic.types``: importing the SDK's types costs every agent actor ~1.2 s
and ~50 MiB, though only ``AnthropicModel`` talks to the API. The field names
and JSON are the API's, so a reply converts both ways without loss
(``Message.of(sdk_message)``; ``block.to_dict()`` for the next request), and
any block type covey does not model (``thinking``, ``server_tool_use``, ...)
keeps every field it came with.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag


class Block(BaseModel):
    """Any content block; the fields beyond ``type`` are kept as they came."""

    model_config = ConfigDict(extra="allow")

    type: str

    def to_dict(self) -> dict[str, Any]:
        """The block as the API takes it back in the next request's history."""
        return self.model_dump(mode="json", exclude_none=True)


class TextBlock(Block):
    type: Literal["text"] = "text"
    text: str


class ToolUseBlock(Block):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: Any = Field(default_factory=dict)


def _block_kind(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in ("text", "tool_use") else "other"


ContentBlock = Annotated[
    Union[Annotated[TextBlock, Tag("text")], Annotated[ToolUseBlock, Tag("tool_use")], Annotated[Block, Tag("other")]],
    Discriminator(_block_kind),
]


class Usage(BaseModel):
    model_config = ConfigDict(extra="allow")

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None


class Message(BaseModel):
    """One assistant reply: ``content`` blocks, ``stop_reason``, ``usage``."""

    model_config = ConfigDict(extra="allow")

    id: str
    type: Literal["message"] = "message"
    role: Literal["assistant"] = "assistant"
    model: str
    content: list[ContentBlock]
    stop_reason: str | None = None
    stop_sequence: str | None = None
    usage: Usage = Field(default_factory=Usage)
    request_id: str | None = Field(default=None, exclude=True)
    """The API response's ``request-id`` header, when known: not part of the message (never
    dumped), carried beside it to the event and the transcript record (Claude Code's ``requestId``)."""

    @classmethod
    def of(cls, message: Any) -> "Message":
        """From any Message-shaped object: the SDK's ``anthropic.types.Message``, a dict, or one of ours."""
        if isinstance(message, cls):
            return message
        if isinstance(message, BaseModel):
            message = message.model_dump(mode="json", exclude_none=True)
        return cls.model_validate(message)

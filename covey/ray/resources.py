"""What an agent asks Ray for (docs/definitions.md#resources): ``AgentResources``, in Ray's own words.

A definition's ``resources`` is untrusted input: each name and amount is checked here, so a
typo or an absurd figure is one line naming the field, never a Ray error at launch. An agent
that asks is placed in a lane of its own (``lane``), whose actors are made with these options
(``covey.agent.factory``); ``unplaced_reason`` says why Ray has not placed one yet.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

LANE_PREFIX = "resources:"
"""A lane whose actors ask for resources: the prefix, then the request as compact JSON."""
MAX_UNITS = 1024.0
"""The most CPUs, GPUs or units of one custom resource an agent may ask for."""
MAX_MEMORY = 1 << 50
"""The most memory an agent may ask for, in bytes (1 PiB)."""
MAX_NAMES = 16
"""The most custom resources or node labels one agent may name."""
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-/]{0,62}")
_LABEL_VALUE = re.compile(r"!?[A-Za-z0-9_.\-/]{0,63}")
_RAY_OWN = {"CPU": "num_cpus", "GPU": "num_gpus", "memory": "memory", "object_store_memory": None}
"""Ray's own resource names, which a definition asks for by their option (or not at all)."""


class AgentResources(BaseModel):
    """The Ray resources one agent's actor asks for; any key but these four is a custom resource."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    num_cpus: float | None = Field(default=None, ge=0, le=MAX_UNITS)
    """CPUs its actor holds while it lives (Ray's ``num_cpus``)."""
    num_gpus: float | None = Field(default=None, ge=0, le=MAX_UNITS)
    """GPUs (Ray's ``num_gpus``): a fraction below 1 shares one."""
    memory: int | None = Field(default=None, ge=0, le=MAX_MEMORY)
    """Heap memory in bytes (Ray's ``memory``), reserved on the node."""
    label_selector: dict[str, str] = Field(default_factory=dict, max_length=MAX_NAMES)
    """Node labels the node must have (Ray's ``label_selector``: ``{"zone": "a"}``, ``"!a"`` for not)."""
    custom: dict[str, float] = Field(default_factory=dict, max_length=MAX_NAMES)
    """Custom resources (``{"browser": 1}``), written beside the others in a definition."""

    @model_validator(mode="before")
    @classmethod
    def _custom_beside(cls, data: Any) -> Any:
        """A definition writes custom resources beside ``num_gpus``; they are gathered under ``custom``."""
        if not isinstance(data, dict):
            return data
        known = set(cls.model_fields) - {"custom"}
        return {**{k: v for k, v in data.items() if k in known},
                "custom": {k: v for k, v in data.items() if k not in known}}

    @field_validator("num_cpus", "num_gpus", "memory", mode="before")
    @classmethod
    def _amount(cls, value: Any) -> Any:
        return _checked_amount(value, whole=False)

    @field_validator("num_cpus", "num_gpus")
    @classmethod
    def _whole_above_one(cls, value: float | None) -> float | None:
        if value is not None and value > 1 and not value.is_integer():
            raise ValueError("Ray takes a fraction only below 1 (0.5 shares one); above 1, a whole number")
        return value

    @field_validator("custom", mode="before")
    @classmethod
    def _custom(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        for name, amount in value.items():
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not a resource name (a letter, then letters, digits, _ . - /)")
            if name in _RAY_OWN:
                instead = _RAY_OWN[name]
                raise ValueError(f"{name!r} is Ray's own: ask for it as {instead!r}" if instead else
                                 f"{name!r} is Ray's own and cannot be asked for")
            amount = _checked_amount(amount, whole=False)
            if not 0 < amount <= MAX_UNITS or (amount > 1 and not float(amount).is_integer()):
                raise ValueError(f"{name}: {amount!r} is not an amount between 0 and {MAX_UNITS:g} "
                                 "(above 1, a whole number)")
        return value

    @field_validator("label_selector", mode="before")
    @classmethod
    def _labels(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        for key, wanted in value.items():
            if not isinstance(key, str) or not _NAME.fullmatch(key):
                raise ValueError(f"{key!r} is not a node label name")
            if not isinstance(wanted, str) or not _LABEL_VALUE.fullmatch(wanted):
                raise ValueError(f"{key}: {wanted!r} is not a label value (letters, digits, _ . - /; '!' for not)")
        return value

    def ray_options(self) -> dict[str, Any]:
        """The actor options Ray takes for this request (``.options(**...)``)."""
        options: dict[str, Any] = {k: v for k in ("num_cpus", "num_gpus", "memory") if (v := getattr(self, k)) is not None}
        if self.custom:
            options["resources"] = dict(self.custom)
        if self.label_selector:
            options["label_selector"] = dict(self.label_selector)
        return options

    def wanted(self) -> dict[str, float]:
        """The request in the names of a node's resources (``GPU``, ``memory``, ``browser``)."""
        names = {"num_cpus": "CPU", "num_gpus": "GPU", "memory": "memory"}
        return {names[k]: float(v) for k in names if (v := getattr(self, k))} | dict(self.custom)

    def written(self) -> dict[str, Any]:
        """The request as a definition writes it: custom resources beside the others."""
        return self.model_dump(exclude={"custom"}, exclude_defaults=True) | self.custom

    def lane(self) -> str:
        """The pool lane of actors made with exactly these options."""
        return LANE_PREFIX + json.dumps(self.written(), sort_keys=True, separators=(",", ":"))

    def __str__(self) -> str:
        return ", ".join(f"{k}={_figure(v)}" for k, v in self.written().items()) or "nothing"


def resources_of(lane: str) -> AgentResources | None:
    """The request a resource lane's actors are made with; None for "home" and "any"."""
    if not lane.startswith(LANE_PREFIX):
        return None
    return AgentResources.model_validate(json.loads(lane[len(LANE_PREFIX):]))


def unplaced_reason(resources: AgentResources, nodes: list[dict[str, Any]]) -> str:
    """Why Ray holds an actor asking for ``resources`` (``nodes``: ``ray.nodes()``)."""
    alive = [node for node in nodes if node.get("Alive")]
    wanted = resources.wanted()
    if not any(all(node.get("Resources", {}).get(k, 0) >= v for k, v in wanted.items()) for node in alive):
        return (f"queued by Ray: no node has {resources}; it starts when a node with them joins "
                "(an autoscaler sees the demand)")
    return f"queued by Ray: the nodes with {resources} are using them; it starts when they are free"


def placement_wait(resources: AgentResources) -> str:
    """``unplaced_reason`` for the Ray this process is connected to."""
    import ray  # here: a definition file is read without Ray

    if not ray.is_initialized():
        return f"queued by Ray: waiting for a node with {resources}"
    nodes: list[dict[str, Any]] = ray.nodes()
    return unplaced_reason(resources, nodes)


def _checked_amount(value: Any, *, whole: bool) -> Any:
    if isinstance(value, str):
        raise ValueError(f"{value!r} is text, not a number (YAML reads 4e9 as text: write 4000000000)")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ValueError(f"{value!r} is not a number")
    if isinstance(value, float) and value.is_integer() and (whole or abs(value) >= 1e6):
        return int(value)  # memory written 4e9 in YAML or JSON
    return value


def _figure(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)

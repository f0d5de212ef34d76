"""How an ``AgentSpec`` reaches an agent actor: without the session runtime it names.

A spec holds the ``SessionRuntime`` (definitions, limits, the session's actor
handles, the model): about 10 KB and three actor handles, which cost more to
pickle than the rest of the spec. So the runtime travels once per receiver and
key, and specs travel without it:

- the Agent tool's registry handle (``RegistryHandle``) sends the runtime with the
  first launch of a key and names it by key afterwards; a registry that does not
  hold the key answers ``NeedRuntime`` and gets it whole;
- the registry keeps the last few runtimes by key and puts each in Ray's object
  store once (``Supervisor``), so a hundred new actors get an object ref, not a
  hundred picklings;
- an agent actor keeps the runtime it was sent last (``_AgentActor``), and its
  handle (``AgentHandle.runtime_key``) sends only the key when it matches.

``travelling`` strips a spec for the trip; ``arrived`` puts back what it left behind.
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from covey.runtime.spec import AgentSpec


class Sealed:
    """A pickled object that stays pickled until someone needs it. The session's model
    travels in the runtime through the registry, which never calls it: unpickling it there
    would import the model's SDK (the Anthropic SDK: ~0.75 s of CPU) on a spawn's path."""

    def __init__(self, blob: bytes) -> None:
        self.blob = blob

    @classmethod
    def of(cls, value: Any) -> Any:
        """Pickled as Ray pickles a call's arguments (cloudpickle: a model class defined in a
        driver's ``__main__`` travels by value)."""
        from ray import cloudpickle

        return value if value is None or isinstance(value, Sealed) else cls(cloudpickle.dumps(value))  # type: ignore[no-untyped-call]

    def open(self) -> Any:
        return pickle.loads(self.blob)


class Carrier(Protocol):
    """What a spec's trip reads of the session runtime it travels without (``SessionRuntime``)."""

    @property
    def model(self) -> Any: ...
    @property
    def env(self) -> dict[str, str] | None: ...
    def open_model(self) -> Any: ...


def travelling(spec: AgentSpec) -> AgentSpec:
    """``spec`` without its runtime, and without its model and environment when those are
    the runtime's (the receiver puts them back: ``arrived``). A scripted model's rules, a
    real model's settings, or a client's whole environment would otherwise travel with
    every spec."""
    runtime = spec.runtime
    if runtime is None:
        return spec
    update: dict[str, Any] = {"runtime": None}
    if spec.model is not None and spec.model is runtime.model:
        update["model"] = None
    env = spec.settings.env
    if env is not None and runtime.env is not None and (env is runtime.env or env == runtime.env):
        update["settings"] = spec.settings.model_copy(update={"env": None})
    return spec.model_copy(update=update)


def arrived(spec: AgentSpec, runtime: Carrier | None) -> AgentSpec:
    """``spec`` with the runtime it travelled without (and the runtime's model, if it has none)."""
    if runtime is None:
        return spec
    update: dict[str, Any] = {"runtime": runtime}
    if spec.model is None or isinstance(spec.model, Sealed):  # a resumed spec kept it sealed
        update["model"] = runtime.open_model() if spec.model is None else spec.model.open()
    if spec.settings.env is None and runtime.env is not None:
        update["settings"] = spec.settings.model_copy(update={"env": runtime.env})
    return spec.model_copy(update=update)

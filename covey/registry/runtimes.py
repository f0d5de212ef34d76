"""The session runtimes the registry holds, by key, and their object refs.

A launch's spec travels without its session runtime once the registry holds that
runtime's key (``covey.runtime.travel``). The registry keeps the last few, and puts each
in Ray's object store once: every new agent actor of a fan-out needs it once, and
pickling it for every one of them was the registry's largest cost in py-spy (its agent
definitions, model and three actor handles).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from ray import ObjectRef

    from covey.runtime.ports import SessionRuntime

    Put = Callable[[SessionRuntime], ObjectRef[SessionRuntime]]

KEPT_RUNTIMES = 4


class Runtimes:
    def __init__(self, put: Put | None = None) -> None:
        self.put = put
        """Puts a runtime in the object store (``ray.put``); None: runtimes travel as themselves."""
        self.newest: SessionRuntime | None = None
        """The newest session runtime: resumed agents get it."""
        self.by_key: dict[str, SessionRuntime] = {}
        """The last ``KEPT_RUNTIMES``: a launch names its spec's runtime by key."""
        self._refs: dict[str, ObjectRef[SessionRuntime]] = {}
        """Those runtimes in the object store, as they are first sent to an agent actor."""

    def keep(self, runtime: SessionRuntime) -> SessionRuntime:
        """The held runtime equal to ``runtime`` (same key), keeping this one if none is."""
        held = self.by_key.setdefault(runtime.key, runtime)
        if len(self.by_key) > KEPT_RUNTIMES:
            gone = next(iter(self.by_key))
            del self.by_key[gone]
            self._refs.pop(gone, None)
        self.newest = held
        return held

    def get(self, key: str) -> SessionRuntime | None:
        return self.by_key.get(key)

    def ref(self, runtime: SessionRuntime | None) -> ObjectRef[SessionRuntime] | None:
        """``runtime`` in the object store, put once per key (None: not held, or no store)."""
        if runtime is None or self.put is None or runtime.key not in self.by_key:
            return None
        if (ref := self._refs.get(runtime.key)) is None:
            ref = self._refs[runtime.key] = self.put(runtime)
        return ref

    @property
    def messaging(self) -> bool:
        """Whether SendMessage may resume a finished agent: with teams, and in coordinator mode."""
        return self.newest is not None and self.newest.messaging

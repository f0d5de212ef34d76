"""What settings files may not do to a run, decided when a session starts (docs/definitions.md#settings-that-cannot-be-turned-against-you).

A repository the person cloned brings its own ``.claude/settings.json``: it must not switch
off their permission checks. So a project or local file's ``defaultMode: bypassPermissions``
is not applied (covey/settings/merged.py records it in ``refused_bypass``), and the run starts in
the mode it would have had without it, with a warning that names the file and says how to
opt in. A run the caller puts in bypass itself (``--permission-mode bypassPermissions``,
``--dangerously-skip-permissions``, ``permission_mode=...`` in the API) is the person's choice.

``disableBypassPermissionsMode: "disable"`` takes bypass away whoever asks: an explicit
request is an error, a mode from settings or a resumed session falls back to ``default``.
"""

from __future__ import annotations

from typing import Any

from covey.errors import UserError

BYPASS = "bypassPermissions"
OPT_IN = ("pass --permission-mode bypassPermissions or --dangerously-skip-permissions on the command line "
          "(permission_mode=\"bypassPermissions\" to Session / covey.run)")
"""How a person who wants bypass says so; only the caller can, never a project's file."""


def bypass_refusal(settings: Any, asked_by: str) -> str:
    """Why ``asked_by`` may not put the run in bypass (settings' ``disableBypassPermissionsMode``)."""
    return (f"{asked_by} asks for bypassPermissions, which {settings.bypass_disabled} disables "
            f"(permissions.disableBypassPermissionsMode: \"disable\"); use another permission mode")


def check_mode(mode: str | None, settings: Any, asked_by: str) -> None:
    """A :class:`UserError` if ``mode`` is bypass and the settings disable it."""
    if mode == BYPASS and settings.bypass_disabled:
        raise UserError(bypass_refusal(settings, asked_by))


def start_mode(settings: Any, *, explicit: str | None, resumed: str | None) -> tuple[str, list[str]]:
    """The main agent's first mode and what the person must be told about it.

    ``explicit``: the caller's (``--permission-mode``); ``resumed``: the resumed session's."""
    if explicit is not None:
        check_mode(explicit, settings, "--permission-mode / --dangerously-skip-permissions (permission_mode)")
        return explicit, []
    notes = []
    mode = resumed or settings.permissions.default_mode or "default"
    if resumed is None and settings.refused_bypass and mode != BYPASS:  # (the user's own file may set it)
        notes.append(f"{settings.refused_bypass} sets permissions.defaultMode to bypassPermissions: a project's "
                     f"settings may not switch off permission checks, so this run is in {mode} mode. "
                     f"To run without permission checks, {OPT_IN}.")
    if mode == BYPASS and settings.bypass_disabled:
        origin = "the resumed session's mode" if resumed else "permissions.defaultMode"
        notes.append(f"{bypass_refusal(settings, origin)}; this run is in default mode")
        mode = "default"
    return mode, notes


def cli_rules(settings: Any, allow: list[str], deny: list[str]) -> tuple[list[str], list[str], list[str]]:
    """``--allowed-tools`` / ``--disallowed-tools`` rules, none under ``allowManagedPermissionRulesOnly``
    (a bare ``--disallowed-tools`` name still removes its tool: that is not a rule)."""
    if not settings.managed_rules_only or not (allow or deny):
        return allow, deny, []
    return [], [], ["--allowed-tools / --disallowed-tools rules not applied: the managed "
                    "allowManagedPermissionRulesOnly lets only managed rules apply"]


def managed_hooks_only(definitions: dict[str, Any], settings: Any) -> tuple[dict[str, Any], list[str]]:
    """Under ``allowManagedHooksOnly`` an agent definition's own hooks run only if it is a managed one."""
    if not settings.managed_hooks_only:
        return definitions, []
    kept, notes = dict(definitions), []
    for name, definition in definitions.items():
        if definition.hooks and definition.source != "policy":
            kept[name] = definition.model_copy(update={"hooks": {}})
            notes.append(f"{definition.path or f'agent {name!r}'}: hooks: not loaded: the managed "
                         f"allowManagedHooksOnly lets only managed hooks run")
    return kept, notes

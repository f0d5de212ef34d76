"""covey's built-in agent types (docs/definitions.md#built-in-agent-types), in covey's own words.

The prompts live in ``covey/definitions/prompts/*.md`` so they read as prose and
diff cleanly; this module only states each type's tools, model and flags.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from covey.definitions.definition import AgentDefinition
from covey.definitions.tool_catalog import tool_names_in_order

# The editing tools (those ``Edit(path)`` rules cover) plus Agent: read-only agents must neither
# change files nor hand the change to a child that can. Edit first, then the catalog's order:
# the agent listing's "All tools except Edit, Write, NotebookEdit, Agent" is Claude Code's text.
READ_ONLY_DENIED = [*sorted(tool_names_in_order(lambda tool: tool.path_rules == "Edit"), key=lambda n: n != "Edit"),
                    "Agent"]

VERIFICATION_REMINDER = (
    "You are the Verification agent: you verify and report, you do not fix. "
    "Do not edit files or work around a failure; record it with the command and its real output."
)

# A source checkout keeps its docs beside the package; an installed wheel may not
# ship them, and the guide then falls back to reading the package source.
DEFAULT_DOCS_DIR = Path(__file__).resolve().parents[2] / "docs"


def _prompt(name: str) -> str:
    return resources.files("covey.definitions").joinpath(f"prompts/{name}.md").read_text(encoding="utf-8").strip()


def guide_definition(docs_dir: str | Path, configured: str) -> AgentDefinition:
    """The covey-guide agent, its prompt pointing at ``docs_dir`` and listing the user's setup.

    ``configured`` is the rendered list of the user's agents, skills and settings;
    the guide is the one built-in whose prompt depends on the project.
    """
    prompt = _prompt("guide").format(docs_dir=str(docs_dir), configured=configured.strip() or "(nothing configured)")
    return AgentDefinition(
        name="covey-guide",
        description=(
            "Answers questions about covey itself: running it, writing agent definitions, skills, "
            "hooks and settings, and how sub-agents, background work and teams behave."
        ),
        prompt=prompt,
        disallowed_tools=READ_ONLY_DENIED,
        model="haiku",
        permission_mode="dontAsk",
        omit_claude_md=True,
    )


def _standard() -> dict[str, AgentDefinition]:
    agents = [
        AgentDefinition(
            name="general-purpose",
            description=(
                "General agent for researching complex questions, searching code and carrying out "
                "multi-step tasks. Use it when no specialised agent fits."
            ),
            prompt=_prompt("general_purpose"),
        ),
        AgentDefinition(
            name="Explore",
            description=(
                "Fast read-only search agent: finds files, symbols and how code fits together. "
                'Say how thorough to be: "quick", "medium" or "very thorough".'
            ),
            prompt=_prompt("explore"),
            disallowed_tools=READ_ONLY_DENIED,
            model="haiku",
            omit_claude_md=True,
            one_shot=True,
        ),
        AgentDefinition(
            name="Plan",
            description=(
                "Software architect agent: explores the code and returns a step-by-step implementation "
                "plan ending with the critical files. Read-only."
            ),
            prompt=_prompt("plan"),
            disallowed_tools=READ_ONLY_DENIED,
            model="inherit",
            omit_claude_md=True,
        ),
        AgentDefinition(
            name="Verification",
            description=(
                "Adversarial tester that runs the work to check a claim that it is done, and returns a "
                "PASS/FAIL/PARTIAL verdict with evidence. Runs in the background; never edits."
            ),
            prompt=_prompt("verification"),
            disallowed_tools=READ_ONLY_DENIED,
            model="inherit",
            background=True,
            color="red",
            critical_system_reminder=VERIFICATION_REMINDER,
        ),
        guide_definition(DEFAULT_DOCS_DIR, ""),
    ]
    return {agent.name: agent for agent in agents}


WORKER = AgentDefinition(
    name="worker",
    description=(
        "A coordinator's worker: carries out one assigned task (research, implementation or "
        "verification) on its own and reports back. Runs in the background; continue it with SendMessage."
    ),
    prompt=_prompt("worker"),
    # A worker reports through its final message (a task notification), as Claude Code's do:
    # messaging is the coordinator's tool, not the worker's.
    disallowed_tools=["SendMessage"],
    model="inherit",
    # No terminal of its own: its permission prompts go up to the person at the root.
    permission_mode="bubble",
    max_turns=500,
)

BUILTIN_AGENTS: dict[str, AgentDefinition] = _standard()
"""The standard built-ins by name (without coordinator mode's ``worker``)."""


def builtin_agents(*, coordinator: bool = False) -> dict[str, AgentDefinition]:
    """The built-in types for a session; in coordinator mode ``worker`` replaces all the others."""
    if coordinator:
        return {WORKER.name: WORKER}
    return dict(BUILTIN_AGENTS)

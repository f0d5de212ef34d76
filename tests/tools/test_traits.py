"""A tool's traits are attributes of its class; the name sets the rest of covey uses are derived from them."""

from covey.agent import progress_reports
from covey.definitions import builtin
from covey.definitions import memory
from covey.definitions import resolve
from covey.definitions.tool_catalog import BUILTIN_TOOLS, path_rule_tools, tool_names_where
from covey.permissions import tool_traits
from covey.subagents import launch as agent_launch
from covey.tools.base import Tool


def test_the_permission_table_says_what_the_tool_classes_say():
    # Permissions sit below the tools and name them once; the classes are the authority.
    assert {t.name: t.path_rules for t in BUILTIN_TOOLS if t.path_rules} == tool_traits.PATH_RULES
    assert {t.name: t.primary_field for t in BUILTIN_TOOLS if t.primary_field} == tool_traits.PRIMARY_FIELDS
    assert tool_names_where(lambda t: t.asked_in_plan_mode) == tool_traits.ASKED_IN_PLAN_MODE
    assert path_rule_tools("Read") == tool_traits.READ_TOOLS
    assert path_rule_tools("Edit") == tool_traits.EDIT_TOOLS


FORMER_TOOLS = {"Read", "Write", "Edit", "Glob", "Grep", "Bash", "TodoWrite", "NotebookEdit", "WebFetch", "WebSearch",
                "TaskOutput", "TaskStop", "ExitPlanMode", "Skill"}
"""The plain tools when the name sets were hand-written: the sets below are what they said of them."""


def _of_former(names):
    """A derived set without the tools added since (theirs come from their own traits)."""
    added = {tool.name for tool in BUILTIN_TOOLS} - FORMER_TOOLS
    return {name: value for name, value in names.items() if name not in added} if isinstance(names, dict) \
        else set(names) - added


def test_the_derived_sets_say_what_the_hand_written_ones_said():
    assert _of_former(tool_traits.READ_TOOLS) == {"Read", "Glob", "Grep"}
    assert _of_former(tool_traits.EDIT_TOOLS) == {"Edit", "Write", "NotebookEdit"}
    assert _of_former(tool_traits.FILE_PATTERN_TOOLS) == {"Read", "Write", "Edit", "Glob", "NotebookRead", "NotebookEdit"}
    assert _of_former(tool_traits.UNCONSULTED_PATH_TOOLS) == {"Write": "Edit", "NotebookEdit": "Edit", "MultiEdit": "Edit",
                                                  "Glob": "Read"}
    assert _of_former(agent_launch.FILE_TOOLS) == {"Read", "Write", "Edit", "Glob", "Grep", "Bash", "NotebookEdit", "Skill"}
    assert _of_former(memory.MEMORY_TOOLS) == {"Read", "Write", "Edit"}
    assert _of_former(set(builtin.READ_ONLY_DENIED)) == {"Edit", "Write", "NotebookEdit", "Agent"}
    assert _of_former(resolve.GLOBAL_DENIED) == {"TeamCreate", "TeamDelete", "TaskOutput", "TaskStop", "ExitPlanMode"}
    assert _of_former(resolve.ASYNC_ALLOWED) == {
        "Read", "Write", "Edit", "Glob", "Grep", "Bash", "TodoWrite", "NotebookEdit", "WebFetch", "WebSearch",
        "Skill", "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "Agent"}
    assert _of_former(set(progress_reports.ACTIVITIES)) == {"Read", "Write", "Edit", "NotebookEdit", "Grep", "Glob", "WebFetch",
                                                "WebSearch"}


def test_a_tool_that_says_nothing_gets_the_cautious_answer():
    class Quiet(Tool):
        name = "Quiet"

    assert (Quiet.read_only, Quiet.path_rules, Quiet.primary_field) == (False, None, None)
    assert Quiet.touches_files and not (Quiet.memory or Quiet.background or Quiet.lead_only)
    assert tool_names_where(lambda t: t.touches_files, [Quiet]) == {"Quiet"}

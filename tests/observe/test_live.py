"""The live agent tree on a terminal: each agent on one line that fits the width, redrawn in
place, and the final state left on the screen; plain lines when stderr is not a terminal."""

from __future__ import annotations

import asyncio
import io

import pytest
from rich.console import Console

from covey.observe.live import LiveView, fit
from tests.observe.terminal import Screen

WIDTH = 40


def agent(agent_id: str, type_: str, status: str, *children: dict, **more) -> dict:
    return {"agent_id": agent_id, "type": type_, "status": status, "description": f"{type_} work", "turns": 3,
            "subtree_tokens": 12345, "subtree_cost_usd": 0.0123, "children": list(children), **more}


def running() -> dict:
    return agent("agent-main0001", "main", "running", agent(
        "agent-child0001", "general-purpose", "running", current_tools=["WebFetch", "Grep"],
        member_name="researcher-with-a-long-name", rate_wait={"since": 0, "limit": "input_tokens"}),
        current_tools=["Agent"])


def grown() -> dict:
    tree = running()
    tree["children"].append(agent("agent-child0002", "Explore", "running", agent("agent-grand001", "Plan", "running")))
    return tree


def final() -> dict:
    return agent("agent-main0001", "main", "completed",
                 agent("agent-child0001", "general-purpose", "completed", member_name="researcher-with-a-long-name"),
                 agent("agent-child0002", "Explore", "completed", agent("agent-grand001", "Plan", "completed")))


def narrow_view(width: int = WIDTH, **kw) -> tuple[LiveView, io.StringIO]:
    out = io.StringIO()
    return LiveView(None, stream=out, console=Console(file=out, width=width, force_terminal=True), **kw), out


@pytest.mark.parametrize("width", [30, WIDTH, 100])
def test_each_agent_is_one_row_that_fits_the_terminal_and_the_last_frame_is_the_final_state(width):
    view, out = narrow_view(width)
    view.show(running())
    view.show(grown())
    view.finish(final())
    screen = Screen(width).feed(out.getvalue())
    assert screen.wraps == 0, screen.lines()  # no row longer than the terminal
    shown = screen.lines()
    assert len(shown) == 4, shown  # one frame, one row per agent: the earlier frames were drawn over
    assert all("completed" in line for line in shown) and not any("running" in line for line in shown), shown
    assert shown[0].startswith("main main0001") and shown[3].startswith("    └── Plan")


def test_the_terminals_echo_of_ctrl_c_after_the_last_row_does_not_throw_the_redraw_off():
    view, out = narrow_view(60)  # the rows are cropped: as wide as they may be
    view.show(grown())
    out.write("^C")  # the terminal echoes Ctrl-C where the cursor is: at the end of the last row
    view.finish(final())
    screen = Screen(60).feed(out.getvalue())
    shown = screen.lines()
    assert screen.wraps == 0 and len(shown) == 4 and not any("running" in line for line in shown), shown


def test_on_a_narrow_terminal_the_least_needed_columns_go_first_and_the_status_stays():
    view, out = narrow_view(60)
    view.show(grown())
    view.finish()
    shown = Screen(60).feed(out.getvalue()).lines()
    assert shown[1] == "├── general-purpose res…  running  3 turns  12.3k tok  $0…", shown  # no "▸ WebFetch"
    view, out = narrow_view(30)
    view.show(grown())
    view.finish()
    shown = Screen(30).feed(out.getvalue()).lines()
    assert shown[1] == "├── general-purpos…  running", shown  # no figures


@pytest.mark.parametrize("widths, room, fitted", [
    ([20, 9, 26, 13], 80, [20, 9, 26, 13]),  # room enough: as measured
    ([20, 9, 26, 13], 60, [20, 9, 26, 0]),  # now goes first, whole (a few cells of it say nothing)
    ([47, 9, 26, 0], 70, [31, 9, 26, 0]),  # then who
    ([47, 9, 26, 0], 60, [24, 9, 23, 0]),  # ... down to 24 cells, then figures
    ([15, 9, 26, 30], 40, [15, 9, 12, 0]),  # a short who is kept whole, and never widened
    ([47, 9, 26, 24], 40, [24, 9, 0, 0]),  # figures go under 7 cells
    ([47, 9, 26, 24], 30, [19, 9, 0, 0]),  # then who again, down to 12
    ([47, 9, 26, 24], 10, [12, 9, 0, 0]),  # narrower still: rich crops what is left
])
def test_the_columns_are_cut_in_their_order_to_fit(widths, room, fitted):
    assert fit(widths, room) == fitted


def test_a_snapshot_that_draws_as_the_last_one_did_is_not_drawn_again():
    view, out = narrow_view()
    view.show(running())
    drawn = len(out.getvalue())
    view.show(running())
    assert len(out.getvalue()) == drawn
    view.finish()


async def test_around_a_run_the_final_tree_is_drawn_when_the_run_is_cancelled():
    trees = [running()]

    async def get_tree():
        return trees[-1]

    view, out = narrow_view(interval_s=0.01)
    view.get_tree = get_tree

    async def run():
        async with view:
            await asyncio.sleep(60)

    task = asyncio.create_task(run())
    await asyncio.sleep(0.1)
    assert "running" in Screen(WIDTH).feed(out.getvalue()).lines()[0]
    trees.append(final())  # what the tree is once the cancelled run has stopped its agents
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    shown = Screen(WIDTH).feed(out.getvalue()).lines()
    assert len(shown) == 4 and all("running" not in line for line in shown), shown


def test_a_paused_view_leaves_its_frame_and_draws_the_next_below_what_was_printed():
    view, out = narrow_view()
    view.show(running())
    view.pause()
    out.write("Allow Bash (ls)? [y/n/a] y\n")  # a permission prompt at the terminal
    view.show(running())  # the same tree: drawn again, under the prompt
    view.finish(final())
    shown = Screen(WIDTH).feed(out.getvalue()).lines()
    assert shown[2] == "Allow Bash (ls)? [y/n/a] y"
    assert "running" in shown[0] and len(shown) == 7 and "running" not in "".join(shown[3:]), shown


def test_off_a_terminal_each_start_and_status_change_is_one_plain_line_and_the_final_one_too():
    out = io.StringIO()
    view = LiveView(None, stream=out)
    view.show(running())
    view.show(grown())
    view.finish(final())
    view.show(running())  # after finish nothing more is drawn
    assert out.getvalue().splitlines() == [
        "covey: main agent-main0001 running: main work",
        "covey: general-purpose researcher-with-a-long-name running: general-purpose work",
        "covey: Explore agent-child0002 running: Explore work",
        "covey: Plan agent-grand001 running: Plan work",
        "covey: main agent-main0001 completed: main work",
        "covey: general-purpose researcher-with-a-long-name completed: general-purpose work",
        "covey: Explore agent-child0002 completed: Explore work",
        "covey: Plan agent-grand001 completed: Plan work",
    ]
    assert "\x1b" not in out.getvalue()

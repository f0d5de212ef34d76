"""The timeline drawn with matplotlib, as a PNG for notebooks and as one offline HTML page, and shown
live under a notebook cell (issue 43, "a picture of the run"). No Ray."""

from __future__ import annotations

import asyncio
import io
import re
import sys
from dataclasses import replace

import pytest

from covey.errors import UserError
from covey.observe import timeline_draw
from covey.observe.notebook_timeline import TimelineDisplay, TimelinePicture
from covey.observe.session_runs import runs_on_disk
from covey.observe.timeline import Row, Span, Timeline, timeline_of
from covey.observe.timeline_page import page, write_page
from tests.observe.test_notebook_display import FakeDisplay, _until
from tests.observe.timeline_files import T0, write_session

pytest.importorskip("matplotlib")


def _timeline(label: str = "general-purpose:a") -> Timeline:
    rows = (Row("agent-m", "main:m", 0, "completed", 0, 10, 1000, 0.02, (Span("model", "model request", 0, 2),)),
            Row("agent-a", label, 1, "failed", 1, 6, 500, 0.01,
                (Span("model", "model request", 1, 3), Span("tool", "Read", 3, 4))),
            Row("agent-b", "Explore:b", 1, "killed", 2, 5), Row("agent-c", "worker:c", 2, "running", 3, 10))
    return Timeline(rows, 10.0, "a run", T0)


def _colours(png_bytes: bytes) -> set:
    from PIL import Image

    return {colour for _, colour in Image.open(io.BytesIO(png_bytes)).convert("RGB").getcolors(1 << 20)}


def test_the_figure_has_a_row_per_agent_and_the_cost_panel():
    fig = timeline_draw.figure(_timeline())
    chart, costs = fig.axes[:2]
    assert [t.get_text().strip() for t in chart.get_yticklabels()] == ["main:m", "└ general-purpose:a",
                                                                       "└ Explore:b", "└ worker:c"]
    assert costs.get_xlabel() == "cost (USD)"
    assert [round(p.get_width(), 4) for p in costs.patches] == [0.02, 0.01, 0.0, 0.0]
    legend = [t.get_text() for t in chart.get_legend().get_texts()]
    assert legend == ["model request", "tool call", "completed", "failed", "killed", "running"]


def test_spans_and_statuses_have_their_own_colours_in_the_png():
    image = timeline_draw.png(_timeline())
    assert image.startswith(b"\x89PNG") and len(image) > 10_000
    colours = _colours(image)
    wanted = [timeline_draw.SPAN_COLOURS["model"], timeline_draw.SPAN_COLOURS["tool"],
              timeline_draw.STATUS_COLOURS["completed"]]
    for hex_colour in wanted:
        rgb = tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
        assert rgb in colours, hex_colour


def test_without_matplotlib_the_picture_is_one_line_saying_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(UserError) as caught:
        timeline_draw.png(_timeline())
    assert str(caught.value) == ("the timeline picture needs matplotlib, which is not installed: "
                                 "pip install 'covey[notebook]'")


def test_the_page_is_self_contained_and_escapes_what_the_session_wrote(tmp_path):
    html = page(_timeline(label="<script>alert(1)</script>"))
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "<style>" in html
    assert "<script" not in html and "&lt;script&gt;" in html
    assert not re.search(r"(src|href)\s*=\s*['\"]?(https?:|//)", html)  # nothing fetched
    assert "<link" not in html and "@import" not in html
    assert html.count("<tr class='agent'") == 4
    path = write_page(tmp_path / "deep" / "t.html", _timeline())
    assert path.stat().st_mode & 0o777 == 0o600 and path.read_text().endswith("</html>\n")


def test_an_empty_timeline_is_a_page_and_a_picture():
    assert "No agent has started" in page(Timeline())
    assert timeline_draw.png(Timeline()).startswith(b"\x89PNG")


def test_a_picture_is_a_png_in_jupyter_and_a_line_in_a_console(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "c"))
    (tmp_path / "p").mkdir()
    runs, _ = runs_on_disk(write_session(tmp_path / "c", tmp_path / "p"))
    picture = TimelinePicture(timeline_of(runs, now_s=T0 + 20))
    assert picture._repr_png_().startswith(b"\x89PNG")
    assert repr(picture).startswith("covey timeline: 5 agents, 20.0 s, $") and "worker:c killed" in repr(picture)


def test_a_session_on_disk_is_a_picture_by_its_id(tmp_path, monkeypatch):
    import covey

    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    (tmp_path / "p").mkdir()
    session_id = write_session(tmp_path / "own", tmp_path / "p")  # a session's own transcript_dir
    picture = covey.session_timeline(session_id[:8], transcript_dir=str(tmp_path / "own"))
    assert [row.label for row in picture.timeline.rows][:2] == ["main:main00000000", "general-purpose:a"]
    assert picture.timeline.title == f"covey session {session_id[:8]}"


async def test_the_live_timeline_is_one_display_redrawn_until_the_final_picture():
    batches = iter([[], [_record(status="running", end=None)], [_record(status="running", end=None)]])

    async def records():
        return next(batches, [_record()])

    fake = FakeDisplay()
    async with TimelineDisplay(records, interval_s=0.01, display=fake) as view:
        await _until(lambda: view.updates >= 3)
    assert fake.calls == [{"display_id": True}]
    assert "appears when the first agent starts" in repr(fake.shown[0])
    pictures = fake.shown[1:]
    assert all(isinstance(p, TimelinePicture) and p.image.startswith(b"\x89PNG") for p in pictures)
    assert pictures[0].timeline.rows[0].status == "running"
    assert pictures[-1].timeline.rows[0].status == "completed"


async def test_without_matplotlib_the_live_timeline_says_so_once_and_the_run_goes_on(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    asked = []

    async def records():
        asked.append(1)
        return [_record()]

    fake = FakeDisplay()
    async with TimelineDisplay(records, interval_s=0.01, display=fake) as view:
        await asyncio.sleep(0.05)  # several intervals
    assert view.updates == 0 and asked == []  # nothing drawn, the records not even asked for
    assert [repr(shown) for shown in fake.shown] == [
        "covey: the timeline picture needs matplotlib, which is not installed: pip install 'covey[notebook]'"]
    assert not hasattr(fake.shown[0], "_repr_png_")


def _record(status: str = "completed", end: float | None = 2.0):
    from tests.observe.test_timeline import _record as record

    return record("agent-m", status=status, end=end)


def test_a_slow_drawing_spaces_the_next_one_out():
    async def records():
        return []

    view = TimelineDisplay(records, interval_s=1.0)
    assert view.pause_s() == 1.0
    view.draw_s = 0.8  # drawing took most of the interval: wait twice as long as it took
    assert view.pause_s() == pytest.approx(1.6)


def test_a_huge_fan_out_draws_the_first_rows_and_says_so():
    row = _timeline().rows[1]
    many = Timeline(tuple(replace(row, agent_id=f"agent-{n}") for n in range(timeline_draw.MAX_ROWS + 50)), 10.0)
    fig = timeline_draw.figure(many)
    assert len(fig.axes[0].get_yticklabels()) == timeline_draw.MAX_ROWS
    assert f"200 agents (the first {timeline_draw.MAX_ROWS} drawn)" in fig._suptitle.get_text()
    assert fig.axes[1].patches and len(fig.axes[1].patches) == timeline_draw.MAX_ROWS

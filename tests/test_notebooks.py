"""Every notebook in notebooks/ runs top to bottom, offline, on the scripted model."""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT_S = 300


OWN_RAY = {"04-cluster"}
"""Notebooks whose subject is the Ray they start (and stop) themselves: their kernel gets no
``RAY_ADDRESS``. Every other kernel joins the test session's Ray (``RAY_ADDRESS``, as a user on
a running Ray would) rather than wait for a private one to start."""


def _kernel_env(ray_address: str | None) -> dict[str, str]:
    """The kernel's env: this process's (HOME and RAY_TMPDIR from conftest), but no API key, and
    the Ray at ``ray_address`` (None: none, the kernel's covey starts its own)."""
    env = dict(os.environ)
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "RAY_ADDRESS", "COVEY_ENABLE_TEAMS", "COVEY_SHARED_FS",
                 "COVEY_SERVICE"):
        env.pop(name, None)
    env.update(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_USAGE_STATS_ENABLED="0")
    if ray_address:
        env["RAY_ADDRESS"] = ray_address
    return env


def test_the_notebooks_are_there():
    assert [p.name for p in NOTEBOOKS] == [
        "01-quickstart.ipynb", "02-teams.ipynb", "03-definitions-and-permissions.ipynb", "04-cluster.ipynb",
        "05-fork-and-caching.ipynb",
    ]


@pytest.mark.ray  # the kernel's covey.run joins the shared Ray, or starts a private one (OWN_RAY)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path: Path, request):
    address = None
    if path.stem not in OWN_RAY:
        address = request.getfixturevalue("ray_session").get_runtime_context().gcs_address
    book = nbformat.read(path, as_version=4)
    nbformat.validate(book)
    client = nbclient.NotebookClient(
        book, timeout=CELL_TIMEOUT_S, kernel_name="python3", allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    try:
        client.execute(env=_kernel_env(address))
    except nbclient.exceptions.CellExecutionError as exc:
        pytest.fail(f"{path.name}: a cell failed\n{exc}")
    outputs = "\n".join(
        out.get("text", "") for cell in book.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
        if out.get("output_type") == "stream"
    )
    assert "Traceback" not in outputs
    expected = {
        "01-quickstart": "This is a greeter",
        "02-teams": "The crew finished every task.",
        "03-definitions-and-permissions": "files left: ['notes.md']",
        "04-cluster": "ray running: False",
        "05-fork-and-caching": "the forks have reported",
    }[path.stem]
    assert expected in outputs, outputs[-3000:]
    if path.stem in ("01-quickstart", "02-teams"):
        _assert_live_tree_was_shown(book)
    assert not _stderr_outputs(book), _stderr_outputs(book)
    if path.stem == "01-quickstart":
        _assert_the_html_export_shows_the_timeline(book)


def _stderr_outputs(book) -> list[str]:
    """What would be a red box in the notebook: stderr streams and errors."""
    return [out.get("text") or out.get("ename") for cell in book.cells if cell.cell_type == "code"
            for out in cell.get("outputs", []) if out.get("name") == "stderr" or out.get("output_type") == "error"]


def _timeline_pictures(book) -> list[str]:
    """The base64 PNGs of covey's timeline in the notebook's outputs."""
    return [out["data"]["image/png"] for cell in book.cells if cell.cell_type == "code"
            for out in cell.get("outputs", []) if "image/png" in out.get("data", {})
            and out["data"].get("text/plain", "").startswith("covey timeline:")]


def _assert_the_html_export_shows_the_timeline(book) -> None:
    """nbconvert's HTML of the executed notebook holds the timeline as an embedded PNG, and no stderr box."""
    nbconvert = pytest.importorskip("nbconvert")
    html, _ = nbconvert.HTMLExporter().from_notebook_node(book)
    images = re.findall(r'<img[^>]*src="data:image/png;base64,([A-Za-z0-9+/=\s]+)"', html)
    assert images, "no embedded PNG in the HTML export"
    picture = base64.b64decode(max(images, key=len))
    assert picture.startswith(b"\x89PNG") and len(picture) > 20_000  # a picture, not a placeholder
    assert 'data-mime-type="application/vnd.jupyter.stderr"' not in html  # an output (the CSS quotes it with ')
    assert "ipywidgets" not in html and "Traceback" not in html


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_stored_notebooks_hold_their_outputs_and_no_red_box(path: Path):
    """The notebooks are stored executed: every code cell ran, the run's timeline is in them as a PNG
    (what a reader of the saved notebook, or of GitHub's rendering of it, sees), and nothing went to stderr."""
    book = nbformat.read(path, as_version=4)
    code = [cell for cell in book.cells if cell.cell_type == "code"]
    assert all(cell.get("execution_count") for cell in code), f"{path.name}: a cell was not run before it was stored"
    runs = [cell for cell in code if "covey.run(" in cell.source or "session.stream(" in cell.source]
    assert runs and all(cell.get("outputs") for cell in runs), f"{path.name}: stored without the run's outputs"
    assert not _stderr_outputs(book), f"{path.name}: {_stderr_outputs(book)}"
    pictures = _timeline_pictures(book)
    assert pictures and all(len(base64.b64decode(p)) > 20_000 for p in pictures), path.name


def _assert_live_tree_was_shown(book) -> None:
    """The run's cell holds one agent-tree display (updated in place to the final state), not a copy per update."""
    for cell in book.cells:
        if cell.cell_type != "code" or ("covey.run(" not in cell.source and "live_tree()" not in cell.source):
            continue
        trees = [out for out in cell.get("outputs", []) if out.get("output_type") == "display_data"
                 and "covey-tree" in out.get("data", {}).get("text/html", "")]
        assert len(trees) == 1, cell.get("outputs")
        html = trees[0]["data"]["text/html"]
        assert "running" not in html and html.count(">completed<") >= 3, html
        return
    pytest.fail("no cell runs the agents")


def test_import_covey_drops_only_rays_note_that_ipywidgets_is_missing(caplog):
    """`import ray` in a kernel without ipywidgets logs this note to stderr: the red box the notebooks showed."""
    import logging

    import covey  # noqa: F401  (what installs the filter)

    logger = logging.getLogger("ray.widgets.util")
    with caplog.at_level(logging.INFO, logger="ray.widgets.util"):
        logger.info("Missing packages: ['ipywidgets']. Run `pip install -U ipywidgets`, then restart the notebook")
        logger.info("Outdated packages:\n  ipywidgets==7 found, needs ipywidgets>=8")
    assert [r.getMessage().splitlines()[0] for r in caplog.records] == ["Outdated packages:"]

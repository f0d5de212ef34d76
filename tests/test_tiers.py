"""The test tiers: a test without the ``ray`` marker cannot start Ray (``pytest -m "not ray"`` is Ray-free)."""

from __future__ import annotations

import asyncio
import os
import textwrap
from pathlib import Path

import pytest
import ray

from covey.model.scripted import ScriptedModel
from covey.ray.cluster import ensure_ray
from covey.session import Session
from tests.conftest import NOT_MARKED, RayNotAllowed

REPO = Path(__file__).resolve().parents[1]


def test_ray_init_is_refused_in_a_test_without_the_marker():
    with pytest.raises(RayNotAllowed, match="not marked `ray`.*mark it @pytest.mark.ray or use the ray_session"):
        ray.init(num_cpus=1)


def test_covey_ensure_ray_and_session_start_are_refused(tmp_path):
    with pytest.raises(RayNotAllowed, match="not marked `ray`"):
        ensure_ray(num_cpus=1)
    session = Session(cwd=str(tmp_path), model=ScriptedModel.from_dict({"rules": []}), pool_size=0)
    with pytest.raises(RayNotAllowed, match="not marked `ray`"):  # the path covey -p and covey.run take
        asyncio.run(session.start())


def test_an_actor_call_does_not_auto_start_ray():
    @ray.remote(num_cpus=0)
    class Probe:
        def ping(self) -> str:
            return "pong"

    with pytest.raises(RayNotAllowed, match="not marked `ray`"):
        Probe.remote()


def test_ray_looks_down_even_if_a_ray_test_left_the_shared_ray_up():
    assert ray.is_initialized() is False


@pytest.mark.ray
def test_a_test_with_the_marker_keeps_the_real_ray_init():
    import ray._private.worker

    assert ray.init.__module__ == ray._private.worker.init.__module__ == "ray._private.worker"


_INNER_TESTS = '''
import os
from pathlib import Path

import pytest
import ray


@pytest.fixture
def uses_the_shared_ray(ray_session):
    return ray_session


def test_unmarked_calls_ray_init():
    ray.init()


def test_unmarked_child_started_a_ray():
    # What a ``covey -p`` child leaves behind: a session directory under RAY_TMPDIR.
    (Path(os.environ["RAY_TMPDIR"]) / "ray" / "session_2026-01-01_00-00-00_000000_1").mkdir(parents=True)


def test_unmarked_and_ray_free():
    assert not ray.is_initialized()


def test_through_a_fixture_that_needs_the_shared_ray(uses_the_shared_ray):
    assert uses_the_shared_ray == "shared"
'''


@pytest.fixture
def inner(pytester):
    """A pytest run in a child process with this suite's conftest (its own HOME and RAY_TMPDIR)."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\nmarkers =\n    ray: needs a live Ray\n")
    # A stand-in for the shared Ray, so no test here starts one.
    pytester.makeconftest('pytest_plugins = ["tests.conftest"]\n\n'
                          "import pytest\n\n\n"
                          "@pytest.fixture(scope='session')\ndef ray_session():\n    return 'shared'\n")
    pytester.makepyfile(test_inner=textwrap.dedent(_INNER_TESTS))
    pytester._monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    return pytester


def test_a_test_that_requests_ray_session_is_marked_ray(inner):
    result = inner.runpytest_subprocess("-q", "-m", "ray", "--collect-only", "-p", "no:cacheprovider")
    assert result.ret == 0
    assert "test_inner.py::test_through_a_fixture_that_needs_the_shared_ray" in result.stdout.str()
    result.stdout.no_fnmatch_line("*test_unmarked*")


def test_the_ray_free_tier_fails_a_test_that_starts_ray_and_the_run(inner):
    result = inner.runpytest_subprocess("-m", "not ray", "-p", "no:cacheprovider", "-rA")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 2 and outcomes.get("failed") == 1 and outcomes.get("errors") == 1
    assert outcomes.get("deselected") == 1  # the test behind a ray_session fixture
    out = result.stdout.str()
    result.stdout.fnmatch_lines(["*_ test_unmarked_calls_ray_init _*", ">*ray.init()", f"E *RayNotAllowed: {NOT_MARKED}"])
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_unmarked_child_started_a_ray*",
                                 f"{NOT_MARKED}; a Ray was started here (by a child process?): *session_2026-01-01*"])
    assert "the Ray-free tier started Ray: Ray session directory session_2026-01-01" in out
    assert result.ret == pytest.ExitCode.TESTS_FAILED

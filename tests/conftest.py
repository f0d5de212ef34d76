"""Shared fixtures: an isolated HOME, no real model calls, one local Ray per test session, and the test tiers.

Tiers: a test that needs a live Ray (the shared ``ray_session``, or a private Ray that
``covey -p``, ``covey.run``, a ``Session``, a cluster, a notebook or a Ray job starts,
in this process or a child) carries the ``ray`` marker; ``pytest -m "not ray"`` is the
fast, Ray-free tier. In a test without the marker ``ray.init`` (so covey's
``ensure_ray`` and ``Session.start``, and Ray's own auto-init) fails at once, and the
test fails if Ray left a session directory under this run's ``RAY_TMPDIR`` (a child
process started Ray).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

# Before anything imports Ray or reads settings: a private HOME (Ray writes
# ~/.ray/auth_token; covey reads ~/.claude and ~/.covey) and a short RAY_TMPDIR
# (Ray's socket paths must stay under the kernel's length limit).
_SANDBOX = Path(tempfile.mkdtemp(prefix="covey-tests-"))
os.environ["HOME"] = str(_SANDBOX / "home")
os.environ["RAY_TMPDIR"] = str(_SANDBOX / "ray")
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
# Keeps a local Ray on 127.0.0.1 rather than the machine's network address.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
# No test may reach a real Messages API: an unknown key and a closed loopback port.
os.environ["ANTHROPIC_API_KEY"] = "test-key-not-real"
os.environ["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"
os.environ.pop("RAY_ADDRESS", None)
# Every `covey -p` a test runs is in-process on a private Ray, as a test expects, and
# leaves no covey service behind; tests of the service unset this themselves.
os.environ["COVEY_NO_SERVICE"] = "1"
os.environ.pop("COVEY_SERVICE_DIR", None)
for path in (_SANDBOX / "home", _SANDBOX / "ray"):
    path.mkdir(parents=True, exist_ok=True)
UNTRUSTED = _SANDBOX / "untrusted"
"""Where a test makes a project folder nobody trusted (a fresh clone): the rest is trusted, below."""

pytest_plugins = ["tests.fake_messages_api", "pytester"]

from tests import shared_services  # noqa: E402  (after the environment above)


def _compile_covey() -> None:
    """Bytecode for covey's modules, when this environment forbids writing it on import
    (``PYTHONDONTWRITEBYTECODE``, as in CI's sandbox): an editable install has none, so each of
    the suite's hundreds of processes (Ray workers, ``covey`` subprocesses, kernels) would
    compile every module again, about half a second of CPU each. A no-op once compiled."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return
    import compileall

    import covey

    compileall.compile_dir(Path(covey.__file__).parent, quiet=1)


_compile_covey()

RAY_CPUS = 2
KIT_POOL_HALF_LIFE_S = 15.0


@pytest.fixture(scope="session")
def ray_session():
    """One local Ray for every test that needs it, stopped at the end of the session."""
    import ray

    from covey.ray.cluster import NAMESPACE

    if not ray.is_initialized():
        ray.init(
            num_cpus=RAY_CPUS,
            include_dashboard=False,
            namespace=NAMESPACE,
            log_to_driver=False,
        )
    # All test traffic stays on loopback.
    assert all(node["NodeManagerAddress"] == "127.0.0.1" for node in ray.nodes())
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def kit_pool(ray_session):
    """A shared pool on the shared Ray, named as the covey service names its own, so a
    served session of this run (``COVEY_SERVICE=1``, see ``served_kits``) borrows from it:
    ready agent actors and a session kit (registry and mailbox), given back and recycled
    between tests as the service recycles them between runs, instead of started per test."""
    from covey.client.paths import service_dir
    from covey.pool.shared_pool import SharedPoolHandle, pool_name

    # Demand decays in seconds, not the service's minutes: a test that ran twenty agents at
    # once leaves no twenty idle actor processes behind for the rest of the run.
    handle = SharedPoolHandle.create(pool_name(str(service_dir())), ray_session.get_runtime_context().get_node_id(),
                                     floors={"home": 2, "kit": 1}, half_life_s=KIT_POOL_HALF_LIFE_S)
    ray_session.get(handle.actor.ready.remote())
    yield handle
    ray_session.get(handle.actor.shutdown.remote())
    handle.kill()


def _covey_service() -> contextlib.AbstractContextManager[Any]:
    from tests.service.served import served_service

    return served_service(start=True)


shared_services.register("shared_service", _covey_service)


@pytest.fixture(scope="session")
def shared_service():
    """One real covey service (its own HOME, service dir and Ray: tests/service/served.py) for
    every test that needs a service serving run after run, as a user's serves: the SDK suite,
    the fault suite, a killed client, the private-files check. Started in the background when
    the run begins and stopped, with everything it started, after the last test that uses it
    (tests/shared_services.py). A test of the service's own start or stop makes its own
    (tests/service/test_service_ray.py)."""
    yield from shared_services.fixture_of("shared_service")


@pytest.fixture
def served_kits(kit_pool, monkeypatch):
    """This test's sessions (``Session``, ``covey.run``, an in-process ``covey -p``) borrow
    their actors from ``kit_pool`` unless a test says otherwise (``service=False``, or an
    ``env`` without ``COVEY_SERVICE``): the path a ``covey -p`` through the service takes."""
    monkeypatch.setenv("COVEY_SERVICE", "1")
    return kit_pool


@pytest.fixture(scope="session", autouse=True)
def trusted_test_folders(tmp_path_factory) -> None:
    """The folders tests make their projects in are trusted by the test HOME's person (covey/trust/),
    as a person trusts the projects they work on; ``UNTRUSTED`` is not."""
    records = _SANDBOX / "home" / ".covey"
    records.mkdir(mode=0o700, exist_ok=True)
    trusted = (tmp_path_factory.getbasetemp(), _SANDBOX / "home", _SANDBOX / "work")
    (records / "trust.json").write_text(json.dumps({"folders": {
        os.path.realpath(folder): {"trusted": True} for folder in trusted}}))


@pytest.fixture
def untrusted_folder(request) -> Path:
    """A folder of this test's that no one trusted (``covey trust`` would be the person's to run)."""
    UNTRUSTED.mkdir(exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=request.node.name[:40], dir=UNTRUSTED))


@pytest.fixture
def home_and_project(tmp_path) -> tuple[Path, Path]:
    """A fresh HOME and an empty project folder beside it."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


@pytest.fixture
def sandbox_home() -> Path:
    return _SANDBOX / "home"


@pytest.fixture(autouse=True)
def managed_settings_dir(tmp_path, monkeypatch) -> Path:
    """The managed settings folder this test's in-process sessions read (empty unless the test writes
    it): never the machine's /etc/claude-code. covey reads it only from the module constant, which
    no environment variable moves; a ``covey`` subprocess gets it through tests/managed_covey.py."""
    import covey.settings.managed

    folder = tmp_path / "managed-settings"
    monkeypatch.setattr(covey.settings.managed, "MANAGED_DIR", folder)
    return folder


# --- Test tiers -------------------------------------------------------------------

NOT_MARKED = (
    "this test is not marked `ray`: it may not start Ray "
    "(mark it @pytest.mark.ray or use the ray_session fixture)"
)


class RayNotAllowed(RuntimeError):
    """Raised by ``ray.init`` in a test without the ``ray`` marker."""


def pytest_collection_modifyitems(config, items):
    """Safety net: a test that requests ``ray_session`` or a shared service (itself or through a
    fixture) is in the ``ray`` tier. Then the order: the Ray-free tests first (the shared services
    start meanwhile: tests/shared_services.py), then a test that starts a covey service of its own
    (``served`` without ``shared_service``: tests/service/test_service_ray.py), before the load
    tests leave the machine busy letting idle actors go, then the other ``ray`` tests."""
    for item in items:
        needs_ray = {"ray_session", *shared_services.SERVICES} & set(getattr(item, "fixturenames", ()))
        if needs_ray and item.get_closest_marker("ray") is None:
            item.add_marker(pytest.mark.ray)
    items.sort(key=_running_order)


def _running_order(item: pytest.Item) -> int:
    if item.get_closest_marker("ray") is None:
        return 0
    fixtures = set(getattr(item, "fixturenames", ()))
    return 1 if "served" in fixtures and "shared_service" not in fixtures else 2


def pytest_collection_finish(session):
    if not session.config.option.collectonly:  # a listing starts nothing
        shared_services.start_needed(session.items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    try:
        return (yield)
    finally:
        shared_services.close_unneeded(item)


def ray_sessions_started() -> set[str]:
    """The session directories every Ray started with this run's ``RAY_TMPDIR`` leaves behind."""
    root = Path(os.environ["RAY_TMPDIR"]) / "ray"
    try:
        return {entry.name for entry in root.iterdir() if entry.name.startswith("session_")}
    except FileNotFoundError:
        return set()


def _refuse_ray(*_: Any, **__: Any) -> Any:
    raise RayNotAllowed(NOT_MARKED)


@pytest.fixture(autouse=True)
def _ray_tier_guard(request):
    """In a test without the ``ray`` marker, starting or joining Ray fails at once.

    ``ray.init`` is what covey's ``ensure_ray`` / ``Session.start`` and Ray's auto-init
    (an actor's ``.remote()`` with no Ray up) call; ``ray.is_initialized`` answers False
    even when an earlier ``ray`` test left the shared Ray up, so an unmarked test behaves
    the same in the whole suite as in ``-m "not ray"``. A child process is out of reach:
    the session directory its Ray leaves under ``RAY_TMPDIR`` fails the test afterwards.
    Tests with the marker are left alone (the session-scoped ``ray_session`` included).
    """
    if request.node.get_closest_marker("ray") is not None:
        yield
        return
    import ray
    import ray._private.worker

    before = ray_sessions_started()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ray, "init", _refuse_ray)
        patch.setattr(ray._private.worker, "init", _refuse_ray)
        patch.setattr(ray, "is_initialized", lambda: False)
        yield
    started = ray_sessions_started() - before
    if started:
        pytest.fail(f"{NOT_MARKED}; a Ray was started here (by a child process?): {sorted(started)}", pytrace=False)


def _ray_processes_of_this_run() -> list[str]:
    """Live raylet / gcs_server processes whose environment holds this run's sandbox."""
    found = []
    marker = str(_SANDBOX).encode()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            args = (proc / "cmdline").read_bytes()
            if b"raylet" not in args and b"gcs_server" not in args:
                continue
            if marker in (proc / "environ").read_bytes():
                command = args.replace(b"\0", b" ").decode(errors="replace")[:120]
                found.append(f"{proc.name} {command}")
        except OSError:
            continue
    return found


def pytest_sessionfinish(session, exitstatus):
    """Every shared service stopped (a run cut short included); and a run that selected no ``ray``
    test (``-m "not ray"``) must have started no Ray at all."""
    shared_services.close_all()
    items = getattr(session, "items", None)
    if not items or any(item.get_closest_marker("ray") for item in items):
        return
    problems = [f"Ray session directory {name}" for name in sorted(ray_sessions_started())]
    problems += [f"Ray process {line}" for line in _ray_processes_of_this_run()]
    if problems:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("the Ray-free tier started Ray: " + "; ".join(problems), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

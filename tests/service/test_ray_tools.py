"""Ray's own commands on the covey service's Ray, as a Ray user runs them from a shell that holds
only HOME, PATH and the one ``export`` line ``covey start`` prints: ``ray status`` and ``ray list
actors`` answer within 5 s and list covey's actors by name, and ``ray job submit`` runs a job
(``covey start --dashboard``: Ray's job and state APIs live in its dashboard). The service is
stopped at the end, with everything it started (tests/service/served.py)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from covey.ray import own_ray
from tests.service.served import SAY_OK, served_service

pytestmark = pytest.mark.ray  # `covey start --dashboard`: the service's own Ray, with Ray's dashboard

ANSWER_S = 5.0
BIN = str(Path(sys.executable).parent)


def _exports(started_out: str) -> dict[str, str]:
    line = next(line for line in started_out.splitlines() if "Ray's CLI: export " in line)
    return dict(part.split("=", 1) for part in shlex.split(line.split("export ", 1)[1]))


def _ray(served, exports: dict[str, str], *args: str, timeout: int = 60) -> tuple[subprocess.CompletedProcess, float]:
    env = {"HOME": str(served.base / "home"), "PATH": f"{BIN}:/usr/bin:/bin", **exports}
    start = time.monotonic()
    done = subprocess.run([f"{BIN}/ray", *args], env=env, capture_output=True, text=True, timeout=timeout)
    elapsed = time.monotonic() - start
    print(f"ray {' '.join(args)}: exit {done.returncode} in {elapsed:.1f} s")
    return done, elapsed


def test_rays_own_commands_answer_on_the_services_ray_with_covey_s_actors_by_name():
    if (missing := own_ray.dashboard_missing()) is not None:
        pytest.skip(missing)
    with served_service() as served:
        started = served.covey("start", "--dashboard", timeout=120)
        assert started.returncode == 0, started.stdout + started.stderr
        print(started.stdout)
        exports = _exports(started.stdout)
        run = served.covey("-p", "say ok", "--model", served.rules(SAY_OK), timeout=120)
        assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr

        status, elapsed = _ray(served, exports, "status")
        assert status.returncode == 0 and "Active:" in status.stdout, status.stdout + status.stderr
        assert elapsed < ANSWER_S

        listed, elapsed = _ray(served, exports, "list", "actors", "--format", "json", "--limit", "1000")
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert elapsed < ANSWER_S
        names = {actor.get("name") or "" for actor in json.loads(listed.stdout)}
        assert any(name.startswith("covey:pool:") for name in names), names
        assert any(name.startswith("covey:kit-") and name.endswith(":registry") for name in names), names

        job, elapsed = _ray(served, exports, "job", "submit", "--", "echo", "from-a-ray-job", timeout=120)
        assert job.returncode == 0 and "from-a-ray-job" in job.stdout + job.stderr, job.stdout + job.stderr

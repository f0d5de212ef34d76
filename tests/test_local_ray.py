"""The local Ray covey starts stays on loopback, even when ``ray`` was imported first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap

PROBE = textwrap.dedent("""
    import json
    import ray  # imported before covey, as in a notebook
    from covey.ray_runtime import ensure_ray

    started = ensure_ray(num_cpus=1)
    context = ray.get_runtime_context()
    print(json.dumps({"started": started, "gcs": context.gcs_address,
                      "nodes": [n["NodeManagerAddress"] for n in ray.nodes()]}))
    ray.shutdown()
""")


def test_a_local_ray_binds_loopback_when_ray_was_imported_first():
    env = {k: v for k, v in os.environ.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"}
    with tempfile.TemporaryDirectory(prefix="cvr-", dir="/tmp") as short:  # Ray's socket paths have a length limit
        env["RAY_TMPDIR"] = short
        out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["started"] is True
    assert seen["nodes"] == ["127.0.0.1"]
    assert seen["gcs"].startswith("127.0.0.1:")


HOLD = textwrap.dedent("""
    import sys
    import ray
    from covey.ray_runtime import ensure_ray

    ensure_ray(num_cpus=1)
    print("ready", flush=True)
    sys.stdin.read()  # until the test closes it
    ray.shutdown()
""")

INSPECT = textwrap.dedent("""
    import json
    import ray
    from covey.observe.inspect import connect

    connect(None)  # what covey ps / tree / logs / kill do
    print(json.dumps([n["NodeManagerAddress"] for n in ray.nodes()]))
""")


def test_covey_ps_from_another_process_finds_the_local_ray_on_loopback():
    env = {k: v for k, v in os.environ.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"}
    with tempfile.TemporaryDirectory(prefix="cvr-", dir="/tmp") as short:
        env["RAY_TMPDIR"] = short
        holder = subprocess.Popen([sys.executable, "-c", HOLD], env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "ready", holder.stderr.read()[-2000:]
            out = subprocess.run([sys.executable, "-c", INSPECT], env=env, capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, out.stderr[-2000:]
            assert json.loads(out.stdout.strip().splitlines()[-1]) == ["127.0.0.1"]
        finally:
            holder.stdin.close()
            try:
                holder.wait(timeout=60)
            except subprocess.TimeoutExpired:
                holder.kill()

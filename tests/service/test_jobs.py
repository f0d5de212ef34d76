"""``covey -p`` as a Ray job's driver (``ray job submit -- covey -p ...``): it uses the
covey service that answers on this node when that one serves the job's Ray, and
otherwise runs in-process with one line saying why and how to get warm runs; it never
starts a service (that one would end with the job). No Ray: the in-process run is a stub."""

from __future__ import annotations

import io
import json
import sys

import pytest

from covey.cli import main as cli
from covey.client import process as lifecycle
from covey.client.process import same_ray
from tests.service.fake_service import INIT, FakeService, result

JOB_GCS = "10.0.0.5:6379"
JOB_ENV = {cli.RAY_JOB_ENV: json.dumps({"runtime_env": {}, "metadata": {}}), "RAY_ADDRESS": JOB_GCS}


@pytest.mark.parametrize("wanted, served, same", [
    (None, {"address": None, "ray_address": "127.0.0.1:4000"}, True),
    ("", {"address": "auto", "ray_address": JOB_GCS}, True),
    (JOB_GCS, {"address": "auto", "ray_address": JOB_GCS}, True),  # a job on the head: `covey start --address auto`
    (JOB_GCS, {"address": JOB_GCS, "ray_address": JOB_GCS}, True),
    ("head:6379", {"address": "head:6379", "ray_address": "10.0.0.5:6379"}, True),
    ("HEAD:6379/", {"address": "head:6379", "ray_address": ""}, True),
    ("localhost:6379", {"address": None, "ray_address": "127.0.0.1:6379"}, True),
    (JOB_GCS, {"address": None, "ray_address": "127.0.0.1:41000"}, False),  # the service's own local Ray
    ("auto", {"address": None, "ray_address": "127.0.0.1:41000"}, False),
    ("head:6379", {"address": JOB_GCS, "ray_address": JOB_GCS}, False),  # not comparable: refused
    (JOB_GCS, {}, False),
])
def test_same_ray_compares_the_named_address_with_the_services_own_and_its_gcs(wanted, served, same):
    assert same_ray(wanted, served) is same


def test_outside_a_job_a_run_goes_through_the_service_without_asking_first():
    def ping():
        raise AssertionError("no ping outside a job: run_served finds or starts the service")

    assert cli._route({"address": None}, {"RAY_ADDRESS": JOB_GCS}, ping) == (True, None)


def test_a_jobs_driver_with_no_service_runs_in_process_and_says_how_to_get_warm_runs():
    served, note = cli._route({"address": None}, JOB_ENV, lambda: None)
    assert served is False
    assert note.startswith("covey: no covey service answers on this node") and "\n" not in note
    assert "`covey start --address auto` on the node the jobs' drivers run on before submitting" in note


def test_a_jobs_driver_uses_the_service_that_serves_the_jobs_ray():
    answer = {"pid": 1, "address": "auto", "ray_address": JOB_GCS}
    assert cli._route({"address": None}, JOB_ENV, lambda: answer) == (True, None)


def test_a_jobs_driver_runs_in_process_when_the_service_serves_another_ray():
    answer = {"pid": 1, "address": None, "ray_address": "127.0.0.1:41000"}
    served, note = cli._route({"address": None}, JOB_ENV, lambda: answer)
    assert served is False
    assert f"serves Ray 127.0.0.1:41000, not this job's {JOB_GCS}" in note and "covey start --address auto" in note


@pytest.fixture
def in_process(monkeypatch):
    """The in-process run, stubbed: what it was asked to run."""
    import covey.cli.local

    calls = []
    monkeypatch.setattr(covey.cli.local, "execute", lambda prompt, options, *a, **k: calls.append(prompt) or 0)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # a driver's stdin with nothing piped (not pytest's)
    return calls


def test_covey_p_in_a_job_with_no_service_starts_none_and_runs_in_process(service_root, monkeypatch, in_process,
                                                                        capsys):
    for key, value in JOB_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(lifecycle, "spawn", lambda *a, **k: pytest.fail("a job's driver started a covey service"))
    assert cli.main(["-p", "say hi", "--model", "scripted:rules.yaml"]) == 0
    assert in_process == ["say hi"]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("covey: no covey service answers on this node"), err


def test_covey_p_in_a_job_runs_on_the_service_that_serves_the_jobs_ray(service_root, monkeypatch, in_process,
                                                                      capsys):
    for key, value in JOB_ENV.items():
        monkeypatch.setenv(key, value)

    def script(peer, run, prompt):
        peer.send(INIT)
        peer.send(result("served"))
        peer.send({"type": "covey_done"})

    with FakeService(service_root, script, identity={"address": "auto", "ray_address": JOB_GCS}) as fake:
        assert cli.main(["-p", "say hi", "--model", "scripted:rules.yaml"]) == 0
    assert in_process == [] and capsys.readouterr().out == "served\n"
    (request, _prompt), = fake.runs
    assert request["request"]["options"]["address"] == JOB_GCS  # the service checks it too


def test_a_served_run_names_ray_address_for_the_service_to_compare(service_root, monkeypatch, in_process):
    monkeypatch.setenv("RAY_ADDRESS", "head:6379")

    def script(peer, run, prompt):
        peer.send(result("served"))
        peer.send({"type": "covey_done"})

    with FakeService(service_root, script) as fake:
        assert cli.main(["-p", "say hi", "--model", "scripted:rules.yaml", "--output-format", "json"]) == 0
    assert fake.runs[0][0]["request"]["options"]["address"] == "head:6379"


def test_the_service_refuses_a_run_that_names_another_ray_and_serves_one_that_names_its_own(tmp_path):
    from covey.client.paths import ServicePaths
    from covey.service.server import Service

    service = Service(ServicePaths(tmp_path), address="auto", idle_timeout_s=60)
    service.ray_address = JOB_GCS
    def run(address: str | None) -> dict:
        return {"subtype": "covey_run", "cwd": "/", "env": {}, "options": {"address": address}, "run": {}}

    for fits in (None, "auto", JOB_GCS):
        assert service._refusal(run(fits)) is None
    refused = service._refusal(run("other:6379"))
    assert refused.startswith("the covey service runs on Ray auto, not other:6379")
    assert "`covey stop`, then `covey start --address other:6379`" in refused

"""cluster.yaml is a config Ray's cluster launcher accepts: schema, launcher preparation, covey installed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import ray
import yaml

jsonschema = pytest.importorskip("jsonschema")

CLUSTER_YAML = Path(__file__).resolve().parent.parent / "cluster.yaml"
SCHEMA = json.loads((Path(ray.__file__).parent / "autoscaler" / "ray-schema.json").read_text())
CLOUD_BLOCK = re.compile(r"^# --- cloud node types.*?\n(.*?)^# --- end cloud node types ---", re.M | re.S)


def _config() -> dict:
    return yaml.safe_load(CLUSTER_YAML.read_text())


def _cloud_config() -> dict:
    """The config as it is meant to be used on AWS: the commented provider and node types uncommented."""
    block = CLOUD_BLOCK.search(CLUSTER_YAML.read_text())
    assert block, "the commented cloud node types block is missing"
    node_types = yaml.safe_load("\n".join(line[2:] for line in block.group(1).splitlines()))
    config = {**_config(), **node_types}
    config["provider"] = {"type": "aws", "region": "us-west-2", "cache_stopped_nodes": False}
    config["auth"] = {"ssh_user": config["auth"]["ssh_user"]}
    return config


def test_cluster_yaml_matches_rays_own_schema():
    jsonschema.validate(_config(), SCHEMA)


def test_the_launcher_prepares_and_validates_it_as_ray_up_does():
    from ray.autoscaler._private.util import prepare_config, validate_config

    prepared = prepare_config(_config())
    validate_config(prepared)
    assert prepared["provider"]["type"] == "local"
    (node_type,) = prepared["available_node_types"].values()
    assert node_type["max_workers"] == len(_config()["provider"]["worker_ips"])


def test_the_commented_cloud_variant_is_valid_too():
    from ray.autoscaler._private.util import prepare_config, validate_config

    config = _cloud_config()
    jsonschema.validate(config, SCHEMA)
    assert set(config["available_node_types"]) == {"covey.head", "covey.worker"}
    assert config["head_node_type"] in config["available_node_types"]
    validate_config(prepare_config(config))


def test_every_node_installs_ray_and_covey_and_starts_ray():
    config = _config()
    setup = " ; ".join(config["setup_commands"])
    assert re.search(r"pip install .*ray\[default\]==" + re.escape(ray.__version__), setup)
    assert re.search(r"pip install .*(-e )?~/covey\b", setup)  # covey from the mounted working tree
    assert config["file_mounts"]["~/covey"] == "."
    assert any("ray start --head" in c and "--port=6379" in c for c in config["head_start_ray_commands"])
    assert any("--ray-client-server-port=10001" in c for c in config["head_start_ray_commands"])
    assert any("ray start --address=$RAY_HEAD_IP:6379" in c for c in config["worker_start_ray_commands"])
    assert config["provider"]["head_ip"] and config["provider"]["worker_ips"]

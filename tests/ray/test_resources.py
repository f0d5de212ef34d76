"""What an agent asks Ray for (``AgentResources``): read from a definition, checked as untrusted
input, turned into Ray's actor options and a pool lane, and why Ray holds it. Plain: no Ray."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from covey.definitions.definition import AgentDefinition
from covey.definitions.loader import load_definitions
from covey.ray.resources import AgentResources, resources_of, unplaced_reason
from covey.subagents.launch import placement_lane


def _file(tmp_path, name: str, resources: str) -> None:
    folder = tmp_path / "proj" / ".claude" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(f"---\nname: {name}\ndescription: d\nresources: {resources}\n---\nBody\n")


def _load(tmp_path, flag_agents=None):
    return load_definitions(tmp_path / "proj", home=tmp_path / "home", flag_agents=flag_agents)


def test_a_definition_asks_in_ray_s_own_words_from_frontmatter_flags_and_the_sdk(tmp_path):
    _file(tmp_path, "trainer", "{num_gpus: 1, memory: 4000000000, browser: 1, label_selector: {zone: a}}")
    flags = json.dumps({"cruncher": {"description": "d", "prompt": "p", "resources": {"num_cpus": 2, "memory": 4e9}}})
    loaded = _load(tmp_path, flags)
    assert loaded.errors == []
    assert loaded.definitions["trainer"].resources.ray_options() == {
        "num_gpus": 1, "memory": 4_000_000_000, "resources": {"browser": 1}, "label_selector": {"zone": "a"}}
    assert loaded.definitions["cruncher"].resources.ray_options() == {"num_cpus": 2, "memory": 4_000_000_000}
    sdk = AgentDefinition(name="g", resources=AgentResources.model_validate({"num_gpus": 0.5}))
    assert sdk.resources.ray_options() == {"num_gpus": 0.5}
    assert AgentDefinition(name="plain").resources is None


@pytest.mark.parametrize("resources, field, words", [
    ("{num_gpus: -1}", "resources.num_gpus", "greater than or equal to 0"),
    ("{num_cpus: 100000}", "resources.num_cpus", "less than or equal to 1024"),
    ("{num_cpus: 2.5}", "resources.num_cpus", "a fraction only below 1"),
    ("{memory: 1.0e+99}", "resources.memory", "less than or equal to"),
    ("{memory: 4e9}", "resources.memory", "YAML reads 4e9 as text"),
    ("{num_gpus: true}", "resources.num_gpus", "not a number"),
    ("{GPU: 1}", "resources.custom", "ask for it as 'num_gpus'"),
    ("{object_store_memory: 1}", "resources.custom", "cannot be asked for"),
    ("{'node:127.0.0.1': 1}", "resources.custom", "not a resource name"),
    ("{browser: 0}", "resources.custom", "not an amount"),
    ("{browser: [1]}", "resources.custom", "not a number"),
    ("{label_selector: {zone: 'a b'}}", "resources.label_selector", "not a label value"),
    ("[num_gpus]", "resources", "valid dictionary"),
])
def test_a_bad_request_is_one_line_naming_the_file_and_field_and_the_rest_still_load(tmp_path, resources, field, words):
    _file(tmp_path, "bad", resources)
    _file(tmp_path, "good", "{num_gpus: 1}")
    loaded = _load(tmp_path)
    assert "bad" not in loaded.definitions and "good" in loaded.definitions
    [error] = loaded.errors
    assert error.path.endswith("bad.md") and error.field == field and words in error.message
    assert "\n" not in str(error)


def test_too_many_custom_resources_are_refused(tmp_path):
    _file(tmp_path, "greedy", "{" + ", ".join(f"r{i}: 1" for i in range(17)) + "}")
    [error] = _load(tmp_path).errors
    assert error.field == "resources.custom"


def test_a_lane_carries_the_request_and_gives_it_back():
    asked = AgentResources.model_validate({"num_gpus": 1, "browser": 2, "label_selector": {"zone": "a"}})
    assert asked.lane().startswith("resources:") and resources_of(asked.lane()) == asked
    assert AgentResources.model_validate({"browser": 2, "num_gpus": 1, "label_selector": {"zone": "a"}}).lane() == asked.lane()
    assert resources_of("home") is None and resources_of("any") is None
    assert str(asked) == "num_gpus=1, label_selector={'zone': 'a'}, browser=2"


def test_an_agent_that_asks_gets_its_own_lane_whatever_its_tools():
    class Runtime:
        spread, shared_fs = False, False

    class Spec:
        def __init__(self, resources):
            self.definition = AgentDefinition(name="t", resources=resources)
            self.tool_names = ["Read"]

    asked = AgentResources.model_validate({"num_gpus": 1})
    assert placement_lane(Spec(asked), Runtime()) == asked.lane()
    assert placement_lane(Spec(None), Runtime()) == "home"


def test_why_ray_holds_it_no_node_has_them_or_they_are_in_use():
    asked = AgentResources.model_validate({"num_gpus": 1})
    head = {"Alive": True, "Resources": {"CPU": 2.0}}
    gpu_node = {"Alive": True, "Resources": {"CPU": 1.0, "GPU": 1.0}}
    assert unplaced_reason(asked, [head]).startswith("queued by Ray: no node has num_gpus=1;")
    assert unplaced_reason(asked, [head, {**gpu_node, "Alive": False}]).startswith("queued by Ray: no node has")
    assert unplaced_reason(asked, [head, gpu_node]).startswith("queued by Ray: the nodes with num_gpus=1 are using them")


def test_the_model_refuses_unknown_shapes_directly():
    with pytest.raises(ValidationError):
        AgentResources.model_validate({"num_gpus": "1"})

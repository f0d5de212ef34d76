import typing

from anthropic.types.stop_reason import StopReason

from covey.loop.steps import STOP_REASON_STEPS, ContinueTurn, CutOff, FinalOutput, RunTools, Stop, next_step
from covey.model.messages import Message


def _message(stop_reason, content):
    return Message.model_validate(
        {"id": "m", "type": "message", "role": "assistant", "model": "x", "content": content,
         "stop_reason": stop_reason, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    )


TEXT = [{"type": "text", "text": "done"}]
TOOL = [{"type": "text", "text": "looking"}, {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]


def test_the_map_covers_every_stop_reason_of_the_sdk():
    assert set(typing.get_args(StopReason)) <= set(STOP_REASON_STEPS)


def test_every_stop_reason_maps_to_exactly_one_step_type():
    for reason in typing.get_args(StopReason):
        step = next_step(_message(reason, TEXT))
        assert isinstance(step, (FinalOutput, RunTools, ContinueTurn, CutOff, Stop))


def test_tool_use_runs_tools_and_end_turn_is_final():
    assert isinstance(next_step(_message("tool_use", TOOL)), RunTools)
    assert next_step(_message("end_turn", TEXT)) == FinalOutput("done")


def test_a_truncated_reply_is_cut_off_with_its_calls_and_a_refusal_stops():
    step = next_step(_message("max_tokens", TOOL))
    assert isinstance(step, CutOff) and step.text == "looking" and [c.id for c in step.calls] == ["t1"]
    assert isinstance(next_step(_message("refusal", TEXT)), Stop)


def test_pause_turn_continues():
    assert next_step(_message("pause_turn", TEXT)) == ContinueTurn()

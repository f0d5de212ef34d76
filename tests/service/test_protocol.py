"""Newline-delimited JSON framing, and the control-protocol shapes."""

from __future__ import annotations

import pytest

from covey.client import ports as protocol


def test_a_message_is_one_line_and_comes_back_whole():
    message = {"type": "user", "message": {"role": "user", "content": "two\nlines and ünïcode"}}
    line = protocol.encode(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert protocol.decode(line) == message


@pytest.mark.parametrize("line", [b"not json\n", b"[1, 2]\n", b'"text"\n'])
def test_a_line_that_is_not_one_object_is_a_protocol_error(line):
    with pytest.raises(protocol.ProtocolError):
        protocol.decode(line)


def test_control_requests_and_responses_have_claude_codes_shapes():
    request = protocol.control_request(protocol.INTERRUPT)
    assert request["type"] == "control_request" and request["request"] == {"subtype": "interrupt"}
    assert protocol.subtype_of(request) == "interrupt" and protocol.subtype_of({"type": "user"}) is None
    assert protocol.new_request_id() != protocol.new_request_id()
    assert protocol.success("r1", {"a": 1}) == {
        "type": "control_response", "response": {"subtype": "success", "request_id": "r1", "response": {"a": 1}}}
    assert protocol.error("r1", "bad") == {
        "type": "control_response", "response": {"subtype": "error", "request_id": "r1", "error": "bad"}}

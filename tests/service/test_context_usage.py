"""``get_context_usage`` reads the conversation's size from the main agent's last reply in its transcript."""

from __future__ import annotations

import json

from covey.service.context_usage import last_usage


def test_the_last_replys_usage_is_read_from_the_transcripts_end(tmp_path):
    transcript = tmp_path / "t.jsonl"
    records = [
        {"type": "assistant", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "user", "message": {"content": "next"}},
        {"type": "assistant", "message": {"usage": {"input_tokens": 900, "output_tokens": 7,
                                                    "cache_read_input_tokens": 100, "service_tier": "standard"}}},
        {"type": "system", "subtype": "turn_duration"},
    ]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n[1, 2]\n")
    assert last_usage(transcript) == {"input_tokens": 900, "output_tokens": 7, "cache_creation_input_tokens": 0,
                                      "cache_read_input_tokens": 100}


def test_no_reply_yet_or_no_transcript_is_none(tmp_path):
    assert last_usage(tmp_path / "missing.jsonl") is None
    (tmp_path / "t.jsonl").write_text(json.dumps({"type": "assistant", "message": "text"}) + "\n")
    assert last_usage(tmp_path / "t.jsonl") is None

"""A Stop hook as people write them for Claude Code: find the last assistant message in the transcript."""
import json, sys
payload = json.load(sys.stdin)
last = None
with open(payload["transcript_path"]) as f:
    for line in f:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if record.get("type") == "assistant":
            texts = [b.get("text", "") for b in record["message"].get("content", []) if b.get("type") == "text"]
            if texts:
                last = "".join(texts)
with open("hooks.log", "a") as out:
    out.write(f"Stop last-assistant={last!r}\n")

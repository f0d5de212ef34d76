#!/usr/bin/env python3
"""A Stop hook of the kind people write for Claude Code: it reads the hook's JSON payload on
stdin, opens the ``transcript_path`` it names, and finds the text of the last assistant message.

Settings that run it:
    {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "python3 last_assistant.py out.txt"}]}]}}

The text goes to the file named by the first argument, or to stdout without one.
Only the standard library: hook scripts run with whatever python3 is on PATH.
"""

import json
import sys


def last_assistant_text(transcript_path):
    """The text blocks of the last assistant record that has any, joined; "" if none."""
    found = ""
    with open(transcript_path, encoding="utf-8") as transcript:
        for line in transcript:
            line = line.strip()
            if not line:
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line still being written
            if entry.get("type") != "assistant":
                continue
            content = entry.get("message", {}).get("content", [])
            texts = [block.get("text", "") for block in content
                     if isinstance(block, dict) and block.get("type") == "text"]
            if texts:
                found = "\n".join(texts)
    return found


def main():
    payload = json.load(sys.stdin)
    text = last_assistant_text(payload["transcript_path"])
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as out:
            out.write(text)
    else:
        print(text)


if __name__ == "__main__":
    main()

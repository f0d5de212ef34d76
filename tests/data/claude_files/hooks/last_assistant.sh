#!/bin/sh
# The same Stop hook without python or jq, as shell one-liners do it for Claude Code: take
# transcript_path from the payload on stdin, the last line that says "type":"assistant" and
# holds a text block, and the last "text" string in that line. It relies on Claude Code's compact
# JSON (no spaces after ':' or ','); text with escaped quotes is cut at the first one.
# Usage: last_assistant.sh [out-file]   (stdout without one)
payload=$(cat)
transcript=$(printf '%s' "$payload" | sed -n 's/.*"transcript_path" *: *"\([^"]*\)".*/\1/p')
text=$(grep '"type":"assistant"' "$transcript" | grep '"type":"text"' | tail -n 1 \
  | sed -n 's/.*"type":"text","text":"\([^"]*\)".*/\1/p')
if [ -n "$1" ]; then printf '%s' "$text" > "$1"; else printf '%s\n' "$text"; fi

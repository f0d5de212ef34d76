#!/bin/sh
# Records that the plugin's hook ran, with the plugin root it was given, then lets the call go on.
cat > /dev/null
printf '%s\n' "$CLAUDE_PLUGIN_ROOT" >> "${GUARD_LOG:-/dev/null}"
exit 0

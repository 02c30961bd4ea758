#!/usr/bin/env bash
# turbo as the root scripts run it: without its telemetry notice and update check, so a newcomer's first screen is the
# project's own output. The environment variables act on this run only; nothing is written to the user's config.
export TURBO_TELEMETRY_DISABLED=1 TURBO_NO_UPDATE_NOTIFIER=1
exec "$(dirname "$0")/../node_modules/.bin/turbo" "$@"

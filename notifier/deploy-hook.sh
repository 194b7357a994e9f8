#!/bin/sh
# notify-changes deploy hook: check the built sitemap, publish, then announce what changed.
#
# Copy this file into your site's deploy (`notify-changes deploy-hook > deploy-hook.sh`
# writes the copy that ships with the installed program). Usage:
#
#   INDEXNOW_KEY=... sh deploy-hook.sh public/sitemap.xml ./publish.sh --prod
#   NOTIFY_PUBLISH='rsync -a public/ web:/srv/site/' sh deploy-hook.sh public/sitemap.xml
#
# The first argument is the sitemap (default: $NOTIFY_SITEMAP, else public/sitemap.xml), or
# "-" for every site of the config's [[sites]] (a site that lies stops the whole publish);
# the rest is the publish command (default: $NOTIFY_PUBLISH, run by sh -c).
# Extra options for notify-changes go in $NOTIFY_ARGS (e.g. "--site-dir public").
#
# Exit codes: 1 or 2 from the check stop the deploy before publishing (the sitemap lies,
# or cannot be read). A failed publish stops it too, with the publish command's code.
# After publishing, exit 3 (some URLs not delivered; they stay pending for the next run)
# does not fail the deploy, which is already live, unless NOTIFY_STRICT=1.
set -u

NOTIFY=${NOTIFY_CHANGES:-notify-changes}
sitemap=${1:-${NOTIFY_SITEMAP:-public/sitemap.xml}}
[ "$#" -gt 0 ] && shift
args=${NOTIFY_ARGS:-}
[ "$sitemap" = "-" ] && sitemap=""  # the config's [[sites]]: each names its own

say() { printf 'deploy-hook: %s\n' "$*" >&2; }

# 1. check before publishing: a lying sitemap must never go live
# shellcheck disable=SC2086  # NOTIFY_ARGS is split into options on purpose
"$NOTIFY" check ${sitemap:+"$sitemap"} $args
code=$?
if [ "$code" -ne 0 ]; then
  say "notify-changes check failed (exit $code): not publishing"
  exit "$code"
fi

# 2. publish
if [ "$#" -gt 0 ]; then
  "$@"
elif [ -n "${NOTIFY_PUBLISH:-}" ]; then
  sh -c "$NOTIFY_PUBLISH"
else
  say "no publish command: pass it after the sitemap, or set NOTIFY_PUBLISH"
  exit 2
fi
code=$?
if [ "$code" -ne 0 ]; then
  say "publish failed (exit $code): nothing announced"
  exit "$code"
fi

# 3. announce what changed, now that it is live
# shellcheck disable=SC2086
"$NOTIFY" run ${sitemap:+"$sitemap"} $args
code=$?
if [ "$code" -eq 3 ] && [ "${NOTIFY_STRICT:-0}" != "1" ]; then
  say "some URLs were not delivered; they stay pending and go out with the next deploy"
  exit 0
fi
exit "$code"

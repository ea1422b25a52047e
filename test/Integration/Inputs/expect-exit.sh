#!/bin/sh
# Usage: expect-exit.sh CODE COMMAND [ARGS...]
#
# Runs COMMAND with its stdout and stderr passed through unchanged and exits 0
# iff COMMAND exited with status exactly CODE; otherwise it prints one
# diagnostic line to stderr and exits 1.  Used by the lit tests because lit's
# internal shell has `not` (any non-zero status) but no way to test for one
# particular status.
if [ $# -lt 2 ]; then
  echo "usage: expect-exit.sh CODE COMMAND [ARGS...]" >&2
  exit 1
fi
want=$1
shift
"$@"
got=$?
if [ "$got" -ne "$want" ]; then
  echo "expect-exit.sh: expected exit status $want, got $got from: $*" >&2
  exit 1
fi
exit 0

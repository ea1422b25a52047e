#!/usr/bin/env bash
# One call of a GPU session, as the device tool runs it: from the
# repository root with the bundle carried as .gpu,
#
#   bash .gpu/session.sh CALL SECONDS      (CALL: call1, call2 or call3)
#
# runs .gpu/CALL.sh with every deadline cut to SECONDS (RNNC_CALL_SECONDS)
# and stops it there, its outputs under /tmp/gpu-CALL, and packs them into
# $OUT, of which the device tool brings back a few files only: CALL.log,
# CALL-small.tar.gz (texts, logs, JSON), CALL-large.tar (profiler reports
# and traces) and, where something did not fit under 16 MiB,
# CALL-left-out.txt (stage.sh's pack).
#
# A window of 15 minutes of device time holds a machine's start (one to two
# minutes) and two calls: call1 with SECONDS=520 (the device tool's
# timeout_s 560), then at once, while the machine is warm, call2 with
# SECONDS the device time the first reply left (lease.budget_left_s) less
# 45, and timeout_s 40 more. SECONDS is at most 560, so that a call and
# its packing end inside the tool's 600 s. Each call's stages come in
# order of importance (see their headers): a call cut short brings back
# the part of its plan that matters most.
set -uo pipefail
call=${1:-}
seconds=${2:-}
case "$call" in
  call1 | call2 | call3) ;;
  *) echo "usage: bash .gpu/session.sh call1|call2|call3 SECONDS" >&2
     exit 2 ;;
esac
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 60 ] ||
   [ "$seconds" -gt 560 ]; then
  echo "session.sh: SECONDS must be a whole number in [60, 560], got" \
       "'$seconds'" >&2
  exit 2
fi
dest=${OUT:?session.sh: OUT (the folder the device tool brings back) is not set}
work=/tmp/gpu-$call
rm -rf "$work"
mkdir -p "$work" "$dest"
# The stages' deadlines stop at SECONDS; what is still running then (the
# stages left, a second each) is stopped, so that the packing below runs
# inside the device tool's time (timeout_s: SECONDS and 40 more).
started=$SECONDS
OUT=$work RNNC_CALL_SECONDS=$seconds timeout -k 10 "$seconds" \
  bash "$(dirname "$0")/$call.sh"
rc=$?
echo "##### session.sh: $call ended after $((SECONDS - started)) s, rc=$rc" \
  "(124: stopped at $seconds s)" | tee -a "$work/$call.log"
source "$(dirname "$0")/stage.sh"
cp "$work/$call.log" "$dest/$call.log"
pack "$work" "$dest" "$call"

# Sourced by gpu/call1.sh and gpu/call2.sh: stage headers and the time
# left of a call with a fixed budget ($SECONDS counts from the call's start).

stage() { echo; echo "##### $* ($(date +%T), ${SECONDS}s into the call)"; }
# Seconds left until $1 seconds into the call (at least 1); with a second
# argument, at most that many.
left_until() {
  local s=$(($1 - SECONDS))
  [ -n "${2:-}" ] && [ "$s" -gt "$2" ] && s=$2
  echo $((s > 0 ? s : 1))
}

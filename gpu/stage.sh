# Sourced by gpu/call1.sh and gpu/call2.sh: stage headers, the time left of
# a call with a fixed budget ($SECONDS counts from the call's start), and
# the packing of $OUT into the few files a GPU session brings back.
#
# The scripts' deadlines are written for a call of 585 s; RNNC_CALL_SECONDS
# (default 585) scales every deadline, so that both calls fit a shorter
# window (say 520 and 190 s for 15 minutes of device time, a machine's
# start included).
CALL_SECONDS=${RNNC_CALL_SECONDS:-585}

stage() { echo; echo "##### $* ($(date +%T), ${SECONDS}s into the call)"; }
# Seconds left until $1 seconds (of a 585 s call, scaled to
# RNNC_CALL_SECONDS) into the call, at least 1; with a second argument, at
# most that many.
left_until() {
  local s=$(($1 * CALL_SECONDS / 585 - SECONDS))
  [ -n "${2:-}" ] && [ "$s" -gt "$2" ] && s=$2
  echo $((s > 0 ? s : 1))
}
# Packs what is under $1 into $2/NAME-small.tar.gz (texts, logs, JSON) and
# $2/NAME-large.tar (profiler reports and traces, already compressed),
# leaving out .npz files (rnn-run's outputs, up to hundreds of MB at
# B=4096, only compared on the machine). Each archive stays under 16 MiB:
# the largest files are left out of the large one, with their names in
# $2/NAME-left-out.txt.
pack() {
  local from=$1 to=$2 name=$3
  mkdir -p "$to"
  (cd "$from" && find . -type f ! -name '*.npz' ! -name '*.ncu-rep' \
     ! -name '*.json.gz' -print0 | tar -czf "$to/$name-small.tar.gz" \
     --null -T -)
  local list=() total=0 size f
  while IFS= read -r f; do
    size=$(stat -c %s "$from/$f")
    if [ $((total + size)) -lt $((15 * 1024 * 1024)) ]; then
      list+=("$f"); total=$((total + size))
    else
      echo "$f ($size bytes)" >> "$to/$name-left-out.txt"
    fi
  done < <(cd "$from" && find . -type f \( -name '*.ncu-rep' -o \
             -name '*.json.gz' \) -printf '%s %p\n' | sort -n | cut -d' ' -f2-)
  [ ${#list[@]} -gt 0 ] && (cd "$from" && tar -cf "$to/$name-large.tar" "${list[@]}")
  ls -l "$to"
}

#!/usr/bin/env bash
# Part of `make test`: runs two commands side by side (two lanes) and fails if either fails.
#
#   scripts/lanes.sh NAME COMMAND NAME COMMAND
#
# After the build, `make test` has two kinds of work. The pages a learner sees (notebooks, JupyterLab, the
# book and the browser checks) wait on a kernel or a browser for much of their time: one after the other,
# the two JupyterLab checks kept one core of two busy. `cargo test` keeps both busy. Side by side, each
# fills the other's gaps. (`make test-pages` uses it once more: the book's checks beside the second
# JupyterLab check, which mostly waits on the browser.) Each lane's output (its standard error too) reaches the terminal as it comes, a
# whole line at a time, so that the two lanes' lines never mix within a line; the end of each lane is
# announced with its time and how it ended. A lane that fails does not stop the other, so that one run
# shows every failure, as `cargo test --no-fail-fast` does. Ctrl+C (or a hang-up, Ctrl+\ or SIGTERM) stops
# both lanes and everything they started.
set -uo pipefail
if [[ $# != 4 ]]; then
  echo "usage: scripts/lanes.sh NAME COMMAND NAME COMMAND" >&2
  exit 2
fi
names=("$1" "$3")
commands=("$2" "$4")
# Each lane in a process group of its own, so that stopping it reaches every program it started.
set -m
declare -A lane_of=()
pids=()
# As Ctrl+C reaches every program of a command run alone: SIGINT to each lane's process group, so that each
# script cleans up as it does then; SIGTERM to what is left after 10 s.
stop() {
  for pid in "${pids[@]}"; do kill -INT -- "-$pid" 2>/dev/null; done
  for _ in $(seq 100); do
    for pid in "${pids[@]}"; do kill -0 -- "-$pid" 2>/dev/null && { sleep 0.1; continue 2; }; done
    return
  done
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done
}
trap 'stop; exit 129' HUP
trap 'stop; exit 130' INT
trap 'stop; exit 131' QUIT
trap 'stop; exit 143' TERM
started=$SECONDS
for i in 0 1; do
  # sed -u writes each line with one write, once it is whole (libtest prints "test NAME ... " and "ok"
  # apart); it ignores SIGINT, so that what a lane prints while it cleans up still comes through; pipefail
  # keeps the lane's own status.
  bash -c "set -o pipefail; { ${commands[$i]}; } 2>&1 | (trap '' INT; exec sed -u '')" &
  pids+=("$!")
  lane_of[$!]=$i
done
status=0
while ((${#lane_of[@]} > 0)); do
  ended=
  wait -n -p ended "${!lane_of[@]}"
  code=$?
  name=${names[${lane_of[$ended]}]}
  unset "lane_of[$ended]"
  if [[ $code == 0 ]]; then
    echo "[lanes] $name: passed after $((SECONDS - started)) s"
  else
    echo "[lanes] $name: FAILED (exit status $code) after $((SECONDS - started)) s"
    status=1
  fi
done
exit "$status"

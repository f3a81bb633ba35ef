#!/usr/bin/env bash
# `scripts/fresh-build.sh [DIR]`: builds the workspace in DIR (default: this project) as the grader does,
# then once more, and fails if the second build compiled anything: every artifact must be "fresh". A build
# script that watches a path that does not exist (cargo then reruns it every time) is the usual cause: it
# cost the students' copy a 13 s relink at every check.
set -euo pipefail
dir=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$dir"
cargo build --quiet --workspace
cargo build --workspace --message-format=json 2>/dev/null | python3 -c '
import json, sys
stale = []
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and not m.get("fresh"):
        stale.append(m["target"]["name"] + " (" + ", ".join(m["target"]["kind"]) + ")")
    if m.get("reason") == "build-finished" and not m.get("success"):
        sys.exit("the second build failed")
if stale:
    sys.exit("compiled again on a build with no change: " + ", ".join(stale))
'

#!/usr/bin/env bash
# make bench-first-peer: the first-peer 404 window on the harness (bench/first_peer.py), no lab.
#   BENCH_OUT=dir   default ~/.cache/skewsafe/bench/first-peer-<UTC time>
#   arguments are passed to python -m bench.first_peer (defaults: --starts 30 --cpu-quotas none,20,10,5,3)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/env.sh
. "$repo/bench/env.sh"
[ -x "$BENCH_PY" ] || TIERS=setup "$repo/hack/test.sh" >/dev/null
"$repo/hack/build-upstream.sh" >/dev/null
out=${BENCH_OUT:-$CACHE/bench/first-peer-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
cd "$repo"
"$BENCH_PY" -m bench.first_peer --out "$out" "$@"
echo "bench-first-peer: $out/first-peer.md"

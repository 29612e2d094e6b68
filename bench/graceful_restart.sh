#!/usr/bin/env bash
# make bench-graceful: client errors through haproxy while kube-apiservers restart, per shutdown setting
# (bench/graceful_restart.py), on the harness: no lab.
#   BENCH_OUT=dir   default ~/.cache/skewsafe/bench/graceful-<UTC time>
#   arguments are passed to python -m bench.graceful_restart (defaults: --rounds 2, every variant)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/env.sh
. "$repo/bench/env.sh"
[ -x "$BENCH_PY" ] || TIERS=setup "$repo/hack/test.sh" >/dev/null
"$repo/hack/build-upstream.sh" >/dev/null
# Debian's haproxy, the lab balancer's own package, run on loopback
command -v haproxy >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q haproxy >/dev/null
out=${BENCH_OUT:-$CACHE/bench/graceful-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
cd "$repo"
"$BENCH_PY" -m bench.graceful_restart --out "$out" "$@"
echo "bench-graceful: $out/graceful.md"

#!/usr/bin/env bash
# make bench: the mvp_check micro-benchmark on the harness, then two upgrades under load (MVP on,
# MVP off) on identical clusters, then one report (JSON, Markdown, PNG timeline).
#   BENCH_TARGET=lab (default)  full lab upgrades (bench/lab_upgrade.py: lab/down.sh + lab/up.sh each)
#   BENCH_TARGET=harness        a mixed harness with a small rolling upgrade instead (minutes, no lab)
#   BENCH_OUT=dir               default ~/.cache/skewsafe/bench/<UTC time>
#   BENCH_SKIP_MICRO=1          skip the micro-benchmark
#   BENCH_REPEATS=n             run each configuration n times (default 1; 3 for the median and range the report gives
#                               per configuration: a lab pair takes ~40 min on 2 cores, so 3 pairs ~2 h)
#   BENCH_MVP="on off" (default) the configurations to run; BENCH_MVP=on measures a change to the MVP path alone;
#                               pre: MVP on, enabled (untimed) before the upgrade, a cluster already running it
#   BENCH_TELL_BALANCER=1       lab runs take each control plane out of the lab's haproxy before its restarts
#                               (bench.lab_upgrade --tell-balancer: skewsafe_balancer_take_out_tasks/put_back_tasks)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/env.sh
. "$repo/bench/env.sh"
bench_setup
export PATH="$VENV/bin:$PATH"
out=${BENCH_OUT:-$CACHE/bench/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
cd "$repo"
"$repo/hack/build-upstream.sh" >/dev/null

micro=()
if [ "${BENCH_SKIP_MICRO:-0}" != 1 ]; then
  "$BENCH_PY" -m bench.micro --out "$out/micro"
  micro=(--micro "$out/micro.json")
fi

runs=()
repeats=${BENCH_REPEATS:-1}
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_REPEATS must be a positive integer, not '$repeats'" >&2; exit 2; }
configs=${BENCH_MVP:-on off}
for c in $configs; do [[ $c = on || $c = off || $c = pre ]] || { echo "bench: BENCH_MVP takes on, off and/or pre, not '$c'" >&2; exit 2; }; done
for i in $(seq "$repeats"); do for mvp in $configs; do
  run="$out/${BENCH_TARGET:-lab}-mvp-$mvp"
  [ "$repeats" = 1 ] || run="$run-$i"
  if [ "${BENCH_TARGET:-lab}" = harness ]; then
    [ "$mvp" != pre ] || { echo "bench: BENCH_MVP=pre needs the lab (BENCH_TARGET=lab)" >&2; exit 2; }
    "$BENCH_PY" -m bench.harness_run --mvp "$mvp" --duration "${BENCH_SECONDS:-60}" --out "$run"
  else
    [ -e "$out/new-only.json" ] || "$BENCH_PY" -m bench.discover --harness --out "$out/new-only.json"
    # A failed upgrade is a result too: analyse what was recorded.
    if [ "$mvp" = pre ]; then mode=(--mvp on --mvp-before); else mode=(--mvp "$mvp"); fi
    [ "${BENCH_TELL_BALANCER:-0}" != 1 ] || mode+=(--tell-balancer)
    "$BENCH_PY" -m bench.lab_upgrade "${mode[@]}" --new-only-file "$out/new-only.json" --out "$run" \
      || echo "bench: lab upgrade with MVP $mvp exited $?" >&2
  fi
  [ -s "$run/requests.jsonl" ] && runs+=("$run")
done; done
"$PLOT_PY" -m bench.analyse "${runs[@]}" "${micro[@]}" --out "$out/report"
echo "bench: $out/report.md"

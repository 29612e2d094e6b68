# shellcheck shell=bash disable=SC2034  # sourced
# bench/env.sh: the tool venv (hack/env.sh) for everything that talks to API servers, plus a
# plotting venv keyed by bench/requirements.txt, so matplotlib never enters the shared tool venv.
repo=${repo:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
# shellcheck source=hack/env.sh
. "$repo/hack/env.sh"
export PYTHONPATH="$PYTHONPATH:$repo:$repo/tests/harness"
BENCH_PY="$VENV/bin/python"
PLOT_VENV="$CACHE/bench-venv/$(cat "$repo/bench/requirements.txt" <("$PY" -V 2>&1) | sha256sum | cut -c1-12)"
PLOT_PY="$PLOT_VENV/bin/python"
bench_setup() {
  [ -x "$BENCH_PY" ] || TIERS=setup "$repo/hack/test.sh" >/dev/null
  if [ ! -e "$PLOT_VENV/.complete" ]; then
    rm -rf "$PLOT_VENV"
    "$PY" -m venv "$PLOT_VENV" && "$PLOT_VENV/bin/pip" install -q -r "$repo/bench/requirements.txt" \
      && touch "$PLOT_VENV/.complete"
  fi
}

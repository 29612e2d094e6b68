#!/usr/bin/env bash
# The one command that runs every test tier (`make test`, called by .ci/run).
#
# Sets up what it needs on a fresh machine (Python venv with pinned tools, the
# collection tree ansible-test requires, the real upstream binaries), runs each
# tier, prints one summary line per tier and exits non-zero if any tier failed.
#
#   TIERS="units sanity" hack/test.sh     run a subset (default: all, in order; binaries, newer-core,
#                                         integration and the lab's builds run niced beside other tiers)
#   TEST_SERIAL=1 hack/test.sh            every tier in the foreground, one after the other
#   TIERS="setup host-deps binaries harness-extra faults shapes paths" hack/test.sh   what is outside `make test`
#                                         (`make test-lab`: the harness trio, three versions at once; the
#                                         execution environment through ansible-navigator and the
#                                         fault-injection story, about 60 min; the one-control-plane and
#                                         external-etcd shapes; the 1.35 -> 1.36 path, `make test-paths`)
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/env.sh
. "$repo/hack/env.sh"
# shellcheck source=hack/deps.sh
. "$repo/hack/deps.sh"
test_deps() {
  need cmd:git "apt-get install -y git"               # the collection's file list
  need cmd:make "apt-get install -y make"             # the README's commands
  need cmd:shellcheck "apt-get install -y shellcheck" # tier shellcheck
  need cmd:python3 "Python 3"
}
# The dependency test runs this script with CHECK_DEPS_ONLY=1: checks only, nothing installed.
if [ -n "${CHECK_DEPS_ONLY:-}" ]; then test_deps; deps_checked; fi
ALL_TIERS="setup host-deps ruff shellcheck ansible-lint sanity units build-docs docsite release binaries integration newer-core e2e"
TIERS=${TIERS:-$ALL_TIERS}
logs="$work/logs"
mkdir -p "$logs"
rm -f "$logs"/.*.rc "$logs"/.*.end "$logs"/.*.start  # a background tier's result is read from these: none from an earlier run
export ANSIBLE_NOCOLOR=1 PY_COLORS=0

declare -A status duration
order=()
failed=0

log() { printf '[test %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

selected() { case " $TIERS " in *" $1 "*) return 0 ;; esac; return 1; }

run_tier() {  # run_tier NAME FUNCTION
  local name=$1 fn=$2 start rc
  selected "$name" || return 0
  order+=("$name")
  log "=== $name"
  start=$SECONDS
  # not `|| rc=$?`: a function run in a || list ignores its own set -e
  ("$fn") >"$logs/$name.log" 2>&1
  rc=$?
  record_tier "$name" "$rc" "$start"
}

# run_tier_bg NAME FUNCTION: the tier niced in the background, beside the tiers that follow (they leave a core idle);
# join_tier NAME waits for it and records its result like run_tier.
declare -A bg_pid bg_start
# ... and in a cgroup (v1, this VM's cpu hierarchy) of low weight: a nice value only weighs within its group, and the
# lab's containers run in a group of their own (lab/dockerd.sh --cgroup-parent), one entity of weight 1024 against
# each niced process at the root. Likely why e2e took 2,647 s beside three harness pairs (CI, 2026-12-06) against
# 1,649 s beside two (2026-12-04): inferred, not measured. No writable v1 cpu hierarchy (cgroup v2): nice alone.
# Not the harness tests: at weight 128 beside the busy lab (1024) four harness pytests starved (CI, 2026-12-07:
# every cluster's kube-apiserver exited on "unable to initialize APF bootstrap configuration" as etcd answered too
# late, 120 s /readyz timeouts in all pairs at load 30-37; one harness up is ~30 s of CPU). They get the lab's weight.
# Half the lab's weight: at the lab's weight, four harness pytests beside e2e pushed the load to 70 (ansible's become
# timed out after 12 s; a TLS handshake through the lab's balancer was cut), and beside the static tiers they made
# those 3-4 times slower (CI rehearsal 2026-12-07: ansible-lint 475 s, sanity 706 s, units 755 s).
BACKGROUND_CPU_SHARES=128
HARNESS_CPU_SHARES=512
# The static tiers beside e2e: half the lab's weight too (their time is not on the critical path, e2e's is).
STATIC_CPU_SHARES=512
cpu_group() {  # cpu_group NAME SHARES [PID]: the group's weight, and PID moved into it
  local group=/sys/fs/cgroup/cpu/$1
  [ -w /sys/fs/cgroup/cpu/cgroup.procs ] || return 0
  mkdir -p "$group" && echo "$2" >"$group/cpu.shares" || return 1
  [ -z "${3:-}" ] || echo "$3" >"$group/cgroup.procs"
}
run_tier_bg() {  # run_tier_bg NAME FUNCTION [CPU_GROUP CPU_SHARES]
  local name=$1 fn=$2 group=${3:-skewsafe-background} shares=${4:-$BACKGROUND_CPU_SHARES}
  selected "$name" || return 0
  if [ -n "${TEST_SERIAL:-}" ]; then run_tier "$name" "$fn"; return 0; fi
  order+=("$name")
  log "=== $name (in the background)"
  bg_start[$name]=$SECONDS
  # the end time is the tier's own, not the join's ($SECONDS carries on in a subshell)
  (
    renice -n 10 -p "$BASHPID" >/dev/null || exit
    cpu_group "$group" "$shares" "$BASHPID" || echo "no cpu cgroup for this tier: niced only"
    ("$fn")
    rc=$?
    echo "$SECONDS" >"$logs/.$name.end"
    echo "$rc" >"$logs/.$name.rc" # what lab_boot_start's job waits for
    exit "$rc"
  ) >"$logs/$name.log" 2>&1 &
  bg_pid[$name]=$!
}
join_tier() {
  local name=$1 rc=0
  [ -n "${bg_pid[$name]:-}" ] || return 0
  wait "${bg_pid[$name]}" || rc=$?
  unset "bg_pid[$name]"
  record_tier "$name" "$rc" "${bg_start[$name]}" "$(cat "$logs/.$name.end" 2>/dev/null || echo "$SECONDS")"
  rm -f "$logs/.$name.end"
}

# run_chain_bg GROUP SHARES NAME:FUNCTION...: those tiers one after the other, in one background job in cpu group
# GROUP; join_chain waits for it and records each tier like run_tier. TEST_SERIAL=1: in the foreground.
chain_pid='' chain_names=()
run_chain_bg() {
  local group=$1 shares=$2 spec
  shift 2
  if [ -n "${TEST_SERIAL:-}" ]; then
    for spec; do run_tier "${spec%%:*}" "${spec#*:}"; done
    return 0
  fi
  local specs=()
  chain_names=()
  for spec; do selected "${spec%%:*}" && specs+=("$spec") && chain_names+=("${spec%%:*}"); done
  [ "${#chain_names[@]}" -gt 0 ] || return 0
  log "=== ${chain_names[*]} (one after the other, in the background)"
  (
    renice -n 10 -p "$BASHPID" >/dev/null || exit
    cpu_group "$group" "$shares" "$BASHPID" || echo "no cpu cgroup for the static tiers: niced only" >&2
    for spec in "${specs[@]}"; do
      echo "$SECONDS" >"$logs/.${spec%%:*}.start"
      ("${spec#*:}") >"$logs/${spec%%:*}.log" 2>&1
      echo "$?" >"$logs/.${spec%%:*}.rc"
      echo "$SECONDS" >"$logs/.${spec%%:*}.end"
    done
  ) &
  chain_pid=$!
}
join_chain() {
  local name
  [ -n "$chain_pid" ] || return 0
  wait "$chain_pid" || true
  chain_pid=''
  for name in "${chain_names[@]}"; do
    order+=("$name")
    record_tier "$name" "$(cat "$logs/.$name.rc" 2>/dev/null || echo 1)" \
      "$(cat "$logs/.$name.start" 2>/dev/null || echo "$SECONDS")" "$(cat "$logs/.$name.end" 2>/dev/null || echo "$SECONDS")"
    rm -f "$logs/.$name.start" "$logs/.$name.end"
  done
}

record_tier() {  # record_tier NAME EXIT_CODE START_SECONDS [END_SECONDS]
  local name=$1 rc=$2
  duration[$name]=$((${4:-$SECONDS} - $3))
  if [ "$rc" -eq 0 ]; then
    status[$name]=passed
  else
    status[$name]="FAILED (exit $rc, log: $logs/$name.log)"
    failed=1
    tail -n 40 "$logs/$name.log" | sed "s/^/  [$name] /"
  fi
  log "$name: ${status[$name]} in ${duration[$name]}s"
}

in_venv() { PATH="$VENV/bin:$PATH" "$@"; }

copy_collection() {  # copy_collection DEST: the collection's files (tracked + new, not ignored) as a real tree
  (cd "$repo" && git ls-files -co --exclude-standard -z | grep -zvE '^(lab|bench)/' |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf -) | tar -C "$1" -xf -
}

# ---------------------------------------------------------------- setup
tier_setup() {
  set -e
  # Debian packages of every README command (hack/host-packages.txt), before any build.
  "$repo/hack/host-deps.sh" install
  test_deps
  if [ ! -f "$VENV/.complete" ]; then
    rm -rf "$VENV"
    "$PY" -m venv "$VENV"
    "$VENV/bin/pip" install --disable-pip-version-check -q -r "$repo/tests/requirements-dev.txt"
    touch "$VENV/.complete"
  fi
  "$VENV/bin/ansible" --version
  mkdir -p "$COLL_ROOT/ansible_collections/skewsafe"
  ln -sfn "$repo" "$COLL_ROOT/ansible_collections/skewsafe/kubeadm"
  # ansible-test needs a real (non-symlinked) tree named ansible_collections/<ns>/<name>.
  rm -rf "$COLL_COPY" && mkdir -p "$COLL_COPY"
  # lab/ and bench/ are developer tooling (node lab, benchmark), not collection content:
  # build_ignore'd, linted by shellcheck and ruff, not seen by ansible-test.
  copy_collection "$COLL_COPY"
  # Offline stand-in for ansible-test's pip bootstrap download (see hack/get_pip_offline.py).
  local pip_version
  pip_version=$("$VENV/bin/python" - <<'PYEOF'
import re, ansible_test._internal.python_requirements as m, inspect
print(re.search(r"pip='([0-9.]+)'", inspect.getsource(m)).group(1))
PYEOF
)
  mkdir -p "$HOME/.ansible/test/cache"
  cp "$repo/hack/get_pip_offline.py" "$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
}

# The host package list against a minimal rootfs of the host's release (hack/test-host-deps.sh).
tier_host_deps() {
  "$repo/hack/test-host-deps.sh"
}

tier_ruff() {
  set -e
  cd "$repo"
  in_venv ruff check .
  in_venv ruff format --check .
}

tier_shellcheck() {
  set -e
  cd "$repo"
  git ls-files -co --exclude-standard -- '*.sh' .ci/run lab/files/entrypoint | xargs -r shellcheck -x
}

tier_ansible_lint() {
  set -e
  cd "$repo"
  in_venv ansible-lint --offline --profile production
  # the README's playbook and task examples, as a user would copy them
  local examples="$work/readme-examples"
  rm -rf "$examples"
  in_venv python hack/readme_examples.py "$examples"
  (cd "$examples" && in_venv ansible-lint --offline --profile production "$examples")
}

tier_sanity() {
  set -e
  cd "$COLL_COPY"
  in_venv ansible-test sanity --venv --python "$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
    --color no --requirements
}

tier_units() {
  set -e
  cd "$repo"
  in_venv python -m pytest tests/unit -q
  # the benchmark's own pure logic (statistics, event classification, linear fit) and the EE tooling
  PYTHONPATH="$PYTHONPATH:$repo:$repo/tests/harness" in_venv python -m pytest bench/tests hack/tests -q
}

tier_build_docs() {
  set -e
  local out="$work/build" dest="$work/installed"
  rm -rf "$out" "$dest" && mkdir -p "$out" "$dest"
  cd "$repo"
  in_venv ansible-galaxy collection build --output-path "$out" .
  # Only $dest, not the checkout ($COLL_ROOT on both paths), or the tarball counts as "already installed"
  # and ansible-doc would read the checkout.
  ANSIBLE_COLLECTIONS_PATH="$dest" PYTHONPATH='' in_venv ansible-galaxy collection install --offline -p "$dest" "$out"/skewsafe-kubeadm-*.tar.gz
  [ -f "$dest/ansible_collections/skewsafe/kubeadm/MANIFEST.json" ] || { echo "the tarball was not installed into $dest"; exit 1; }
  # What users get: the collection's content and its unit tests (as the model collections ship), no dev tooling.
  local listing stray f
  listing=$(tar -tzf "$out"/skewsafe-kubeadm-*.tar.gz | grep -v '/$')
  stray=$(grep -vE '^(plugins|roles|playbooks|meta|docs|changelogs|tests/unit)/|^(tests/config\.yml|README\.md|COPYING|MANIFEST\.json|FILES\.json|requirements\.txt|bindep\.txt)$' <<<"$listing" || true)
  [ -z "$stray" ] || { echo "the tarball carries files users do not need:"; echo "$stray"; exit 1; }
  for f in plugins/action/mvp_check.py roles/control_plane_upgrade/meta/argument_specs.yml playbooks/upgrade.yml \
    meta/runtime.yml changelogs/changelog.yaml README.md COPYING requirements.txt; do
    grep -qx "$f" <<<"$listing" || { echo "the tarball lacks $f"; exit 1; }
  done
  echo "tarball: $(wc -l <<<"$listing") files, no developer tooling"
  PYTHONPATH='' in_venv python "$repo/hack/check_docs.py" "$dest"
  # Execution environment: ansible-builder's introspection of the installed collection must find
  # its Python needs, and the example EE definition must give a complete build context.
  local deps
  deps=$(in_venv ansible-builder introspect --sanitize "$dest")
  echo "$deps"
  # (--sanitize drops PyYAML: ansible-core itself brings it.)
  for pkg in kubernetes urllib3; do
    grep -qi "^- '$pkg.*# from collection skewsafe.kubeadm" <<<"$deps" || { echo "introspection lacks $pkg"; exit 1; }
  done
  rm -rf "$work/ee" && in_venv ansible-builder create --output-filename Containerfile -f "$repo/docs/awx/execution-environment.yml" --context "$work/ee"
  grep -q "ansible-galaxy collection install" "$work/ee/Containerfile"
  grep -q "skewsafe.kubeadm" "$work/ee/_build/requirements.yml"
  echo "execution environment build context: ok ($work/ee)"
}

# antsibull-docs lint of every plugin and role doc and the extra docs, then the HTML docs site,
# both from the collection as installed from its tarball by build-docs.
tier_docsite() {
  set -e
  [ -f "$work/installed/ansible_collections/skewsafe/kubeadm/MANIFEST.json" ] ||
    { echo "docsite needs the installed tarball of tier build-docs: TIERS=\"setup build-docs docsite\""; exit 1; }
  in_venv "$repo/hack/docsite.sh" "$work/installed" "$work/docsite"
}

tier_release() {
  set -e
  cd "$repo"
  in_venv antsibull-changelog lint
  # A release from a scratch copy of the collection: the changelog must accept galaxy.yml's version.
  local scratch="$work/release/ansible_collections/skewsafe/kubeadm"
  rm -rf "$work/release" && mkdir -p "$scratch"
  copy_collection "$scratch"
  (cd "$scratch" && ANSIBLE_COLLECTIONS_PATH="$work/release" in_venv antsibull-changelog release)
  local version
  version=$(sed -n 's/^version: *//p' galaxy.yml)
  grep -q "^v$version$" "$scratch/CHANGELOG.rst" || { echo "CHANGELOG.rst has no v$version section"; exit 1; }
  echo "changelog release of $version: ok"
}

tier_binaries() {
  "$repo/hack/build-upstream.sh"
}

# One pytest per harness pair (K8S_HARNESS_VERSIONS), side by side: the harness tests mostly wait on
# kube-apiserver restarts and peer syncs, so two pairs take little more wall time than one. The lab pair
# (K8S_OLD_VERSION-K8S_NEW_VERSION) has the tests of the lab's versions alone as well (44 against 29 and 23): its
# MVP modules and the rest run as two pytests, or it ran on alone for 8 to 11 minutes after the others (CI rehearsal,
# 2026-12-06: pairs 2,164 s and 2,298 s, the lab pair longer, the machine idle beside it). Module-scoped clusters are
# per module, so the split boots no cluster twice. At most INTEGRATION_JOBS pytests at once (default 2: four at
# once starved, see HARNESS_CPU_SHARES); INTEGRATION_SERIAL=1 runs them one after the other.
INTEGRATION_MVP_MODULES="tests/integration/test_mvp_check.py tests/integration/test_mvp_real_apiservers.py"
integration_run() {  # integration_run RUN PATH...: one harness pytest; its exit code in $logs/.integration-RUN.rc
  local run=$1 p rc=0
  shift
  p=${run%-mvp} && p=${p%-rest}
  SKEWSAFE_HARNESS_SCOPE=make-test SKEWSAFE_HARNESS_PAIR=$p PYTHONPATH="$PYTHONPATH:$repo/tests/harness" \
    in_venv python -m pytest "$@" \
    -q -p no:cacheprovider --durations=5 >"$logs/integration-$run.log" 2>&1 || rc=$?
  echo "$rc" >"$logs/.integration-$run.rc"
}
tier_integration() {
  set -e
  cd "$repo"
  local pairs lab_pair p run name rc=0 runs=() rest=() paths=() jobs=${INTEGRATION_JOBS:-2}
  [ -z "${INTEGRATION_SERIAL:-}" ] || jobs=1
  pairs=$(cd "$repo/tests/harness" && in_venv python -c \
    'from skewsafe_harness.pins import harness_pairs; print(" ".join(f"{o}-{n}" for o, n in harness_pairs()))')
  lab_pair=$(cd "$repo/tests/harness" && in_venv python -c \
    'from skewsafe_harness.pins import old_version, new_version; print(f"{old_version()}-{new_version()}")')
  [ -n "$pairs" ] || { echo "no harness pairs in hack/versions.env"; exit 1; }
  mapfile -t rest < <(find tests/integration -name 'test_*.py' | sort | grep -vxF -f <(tr ' ' '\n' <<<"$INTEGRATION_MVP_MODULES"))
  for p in $pairs; do
    if [ "$p" = "$lab_pair" ]; then runs+=("$p-mvp" "$p-rest"); else runs+=("$p"); fi
  done
  rm -f "$logs"/.integration-*.rc
  # first: the component feature-gate table preflight uses, re-measured on the real binaries (~2 min)
  { in_venv python hack/feature_gates.py --check >"$logs/integration-feature-gates.log" 2>&1 && echo 0 || echo 1; } \
    >"$logs/.integration-feature-gates.rc" &
  for run in "${runs[@]}"; do
    case $run in
      *-mvp) read -ra paths <<<"$INTEGRATION_MVP_MODULES" ;;
      *-rest) paths=("${rest[@]}") ;;
      *) paths=(tests/integration) ;;
    esac
    while [ "$(jobs -pr | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    integration_run "$run" "${paths[@]}" &
  done
  wait
  for name in "${runs[@]}" feature-gates; do
    echo "=== integration-$name"
    cat "$logs/integration-$name.log"
    [ "$(cat "$logs/.integration-$name.rc" 2>/dev/null)" = 0 ] || { echo "=== $name: FAILED"; rc=1; }
  done
  return "$rc"
}

# Integration as soon as the host packages are in, beside the static tiers: it waits for the binaries tier here.
tier_integration_when_built() {
  if selected binaries; then
    until [ -f "$logs/.binaries.rc" ]; do sleep 5; done
    [ "$(cat "$logs/.binaries.rc")" = 0 ] || { echo "the binaries tier failed: no harness"; return 1; }
  fi
  tier_integration
}

# The unit tests with the newer ansible-core (NEWER_CORE_PARTS, default "units" here: its sanity run took about 37 min
# of CI's 90 under load on 2026-12-07; `make test-lab` runs "sanity units").
tier_newer_core() {
  # its container runs under its own dockerd's cgroup (skewsafe-controller), not this tier's: its weight is set there,
  # at the static tiers' weight: at 128 beside e2e and the harness, its units took 1,725 s and a playbook run
  # outlasted its 120 s guard (rehearsal, 2026-12-07)
  NEWER_CORE_PARTS=${NEWER_CORE_PARTS:-units} OWN_DOCKERD_CPU_SHARES=$STATIC_CPU_SHARES \
    "$repo/hack/controller/run.sh"
}

tier_e2e() {
  set -e
  cd "$repo"
  SKEWSAFE_LAB_BOOTED=$lab_booted PYTHONPATH="$PYTHONPATH:$repo/tests/harness" \
    in_venv python -m pytest tests/e2e -m "not faults and not navigator and not molecule and not single_control_plane and not external_etcd and not version_path and not patch_upgrade" -rA -s --durations=0
}

# Not in `make test` (CI budget: the older patch is one more build): `make test-lab` runs it. The harness trio,
# three kube-apiserver versions at once (K8S_PATCH_FROM_VERSION, K8S_OLD_VERSION, K8S_NEW_VERSION): every
# command of the older patch is built first (cached), as the paths tier does. Then exactly the harness tests
# `make test` leaves out (SKEWSAFE_HARNESS_SCOPE, tests/integration/conftest.py): the diagnosis of each fault with
# the pairs other than the lab's, the check's cost benchmark, the harness's own CLI.
tier_harness_extra() {
  set -e
  cd "$repo"
  local patch_from
  patch_from=$(cd "$repo/tests/harness" && in_venv python -c \
    'from skewsafe_harness.pins import harness_trio; print(harness_trio()[0])')
  "$repo/hack/build-upstream.sh" "$patch_from"
  SKEWSAFE_HARNESS_SCOPE=test-lab PYTHONPATH="$PYTHONPATH:$repo/tests/harness" in_venv python -m pytest tests/integration \
    -q -p no:cacheprovider -rA --durations=10
}

# Not in `make test` (CI budget): `make test-lab` runs it. Its fresh lab first serves the execution
# environment's jobs through ansible-navigator (read-only: doc, preflight, upgrade --check); the upgraded
# lab the story leaves then serves the molecule scenarios (tests/e2e/test_molecule.py).
tier_faults() {
  set -e
  cd "$repo"
  PYTHONPATH="$PYTHONPATH:$repo/tests/harness" in_venv python -m pytest tests/e2e -m "navigator or faults or molecule" -rA -s --durations=0
}

# Not in `make test` either: the other lab shapes, one lab each (the lab has fixed names: one at a time).
tier_shapes() {
  cd "$repo"
  local rc=0
  LAB_TOPOLOGY=single PYTHONPATH="$PYTHONPATH:$repo/tests/harness" \
    in_venv python -m pytest tests/e2e -m single_control_plane -rA -s || rc=1
  LAB_TOPOLOGY=external-etcd PYTHONPATH="$PYTHONPATH:$repo/tests/harness" \
    in_venv python -m pytest tests/e2e -m external_etcd -rA -s || rc=1
  return "$rc"
}

# Not in `make test` either: a lab that starts at another version (default: the oldest harness version,
# 1.35.4) and is upgraded to K8S_OLD_VERSION. Its own lab; every command of the start version is built first.
tier_paths() {
  set -e
  cd "$repo"
  local from patch_from rc=0
  from=${PATH_FROM_VERSION:-$(cd "$repo/tests/harness" && in_venv python -c \
    'from skewsafe_harness.pins import pins; print(pins()["K8S_HARNESS_VERSIONS"].split()[0])')}
  "$repo/hack/build-upstream.sh" "$from"
  K8S_VERSION=$from PYTHONPATH="$PYTHONPATH:$repo/tests/harness" \
    in_venv python -m pytest tests/e2e -m version_path -rA -s || rc=1
  # then a patch upgrade within the lab's older minor (K8S_PATCH_FROM_VERSION), in a lab of its own
  patch_from=$(cd "$repo/tests/harness" && in_venv python -c \
    'from skewsafe_harness.pins import pins; print(pins()["K8S_PATCH_FROM_VERSION"])')
  "$repo/hack/build-upstream.sh" "$patch_from"
  K8S_VERSION=$patch_from PYTHONPATH="$PYTHONPATH:$repo/tests/harness" \
    in_venv python -m pytest tests/e2e -m patch_upgrade -rA -s || rc=1
  return "$rc"
}

# The e2e story's lab (lab/down.sh, lab/up.sh: builds included), booted in the background as soon as the host packages
# are in and the upstream binaries built, beside the static tiers; its fixture then takes the lab as booted
# (SKEWSAFE_LAB_BOOTED=1, given to that tier alone) and checks its versions. Warm caches: the boot (292 s in CI on
# 2026-12-06, e2e's fixture setup) leaves the critical path instead of following the static tiers (about 290 s).
# A failed boot is only logged: the fixture boots again and fails loudly.
boot_pid='' boot_start=0 lab_booted=''
lab_boot_start() {
  [ -z "${TEST_SERIAL:-}" ] || return 0
  selected e2e || return 0
  log "=== e2e's lab boots in the background once the binaries are built (log: $logs/lab-boot.log)"
  boot_start=$SECONDS
  (
    if selected binaries; then
      until [ -f "$logs/.binaries.rc" ]; do sleep 5; done
      [ "$(cat "$logs/.binaries.rc")" = 0 ] || { echo "the binaries tier failed: no lab"; exit 1; }
    fi
    echo "binaries ready after $((SECONDS - boot_start))s"
    "$repo/lab/down.sh" && "$repo/lab/up.sh"
  ) >"$logs/lab-boot.log" 2>&1 &
  boot_pid=$!
}
lab_boot_wait() {
  [ -n "$boot_pid" ] || return 0
  local rc=0
  wait "$boot_pid" || rc=$?
  boot_pid=''
  log "e2e's lab boot (background): exit $rc after $((SECONDS - boot_start))s (log: $logs/lab-boot.log)"
  if [ "$rc" -eq 0 ]; then lab_booted=1; fi
}

# The lab's builds (lab/build.sh), started in the background once the upstream binaries exist, beside integration and
# newer-core; the first lab tier waits for them. On an empty machine: 759 s beside them (2026-12-04), instead of
# about 13 min at the start of e2e; cached, a few seconds. Not when e2e's lab boots (that builds them).
prebuild_pid='' prebuild_start=0
lab_prebuild_start() {
  local t
  [ -z "${TEST_SERIAL:-}" ] || return 0  # lab/up.sh builds in the tier
  [ -z "$boot_pid" ] || return 0
  for t in e2e faults shapes paths; do
    selected "$t" || continue
    log "=== lab builds in the background (log: $logs/lab-prebuild.log)"
    prebuild_start=$SECONDS
    nice -n 10 "$repo/lab/build.sh" >"$logs/lab-prebuild.log" 2>&1 &
    prebuild_pid=$!
    return 0
  done
}
lab_prebuild_wait() {  # a failure is only logged: lab/up.sh builds again in the tier and fails there, loudly
  [ -n "$prebuild_pid" ] || return 0
  local rc=0
  wait "$prebuild_pid" || rc=$?
  prebuild_pid=''
  log "lab builds (background): exit $rc after $((SECONDS - prebuild_start))s (log: $logs/lab-prebuild.log)"
}

run_tier setup tier_setup
if [ "${status[setup]:-passed}" != passed ]; then
  log "setup failed: nothing else can run"
else
  # The upstream binaries (Go, both cores: about 25 min on an empty machine, 0 s cached) build niced beside the
  # static tiers, which keep about one core busy.
  run_tier_bg binaries tier_binaries
  run_tier host-deps tier_host_deps
  [ "${status[host-deps]:-passed}" != passed ] || lab_boot_start
  # The harness pairs and the newer ansible-core's container start beside the static tiers and go on beside e2e
  # (the harness at HARNESS_CPU_SHARES: at the lab's weight they starved e2e, at 128 they starved).
  run_tier_bg integration tier_integration_when_built skewsafe-harness "$HARNESS_CPU_SHARES"
  run_tier_bg newer-core tier_newer_core
  # The static tiers, one after the other beside e2e rather than before it: e2e, the longest tier, starts as soon as
  # its lab is up (CI of 2a59cd7, 2026-12-07: e2e waited 28 min for them with its lab booted, the run took 5,310 s).
  run_chain_bg skewsafe-static "$STATIC_CPU_SHARES" ruff:tier_ruff shellcheck:tier_shellcheck \
    ansible-lint:tier_ansible_lint sanity:tier_sanity units:tier_units build-docs:tier_build_docs \
    docsite:tier_docsite release:tier_release
  join_tier binaries
  bins_ok=true
  [ "${status[binaries]:-passed}" = passed ] || bins_ok=false
  # The lab's builds run niced beside what is left of them. TEST_SERIAL=1 runs every tier in the foreground.
  if $bins_ok; then
    lab_prebuild_start
  fi
  for t in e2e:tier_e2e harness-extra:tier_harness_extra faults:tier_faults shapes:tier_shapes paths:tier_paths; do
    # the harness trio is not started beside the pairs of integration
    [ "${t%%:*}" != harness-extra ] || join_tier integration
    if $bins_ok; then
      case ${t%%:*} in e2e | faults | shapes | paths) lab_prebuild_wait ;; esac
      [ "${t%%:*}" != e2e ] || lab_boot_wait
      run_tier "${t%%:*}" "${t#*:}"
    fi
  done
  join_chain
  join_tier integration
  join_tier newer-core
  lab_prebuild_wait
  lab_boot_wait
  if ! $bins_ok; then
    for t in e2e harness-extra faults shapes paths; do
      selected "$t" || continue
      order+=("$t"); status[$t]="FAILED (not run: upstream binaries missing)"; duration[$t]=0; failed=1
    done
  fi
fi

echo
echo "==================== summary ===================="
for t in "${order[@]}"; do printf '%-14s %-8s %s\n' "$t" "${duration[$t]}s" "${status[$t]}"; done
passed_n=0; failed_n=0
for t in "${order[@]}"; do if [ "${status[$t]}" = passed ]; then passed_n=$((passed_n + 1)); else failed_n=$((failed_n + 1)); fi; done
echo "tiers: $passed_n passed, $failed_n failed"
exit $failed

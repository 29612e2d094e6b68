#!/usr/bin/env bash
# Runs INSIDE the newer-core controller container (started by hack/controller/run.sh):
# the repository is mounted read-only at /src. Makes the real collection copy ansible-test
# needs, installs the offline pip bootstrap, then runs ansible-test sanity and the unit tests.
# Exits non-zero if either failed (both always run).
set -euo pipefail
py=${CONTROLLER_PYTHON:?}
src=/src
tree=/tmp/coll
copy=$tree/ansible_collections/skewsafe/kubeadm

say() { printf '[newer-core %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

ansible --version
python --version

# The same copy as hack/test.sh tier_setup: tracked + untracked-not-ignored files, minus lab/.
mkdir -p "$copy"
(cd "$src" && git -c safe.directory="$src" ls-files -co --exclude-standard -z | grep -zvE '^(lab|bench)/' |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf -) | tar -C "$copy" -xf -
say "collection copy: $(find "$copy" -type f | wc -l) files in $copy"

# Offline stand-in for ansible-test's get-pip download; version read from ansible_test.
pip_version=$(python - <<'PYEOF'
import re, ansible_test._internal.python_requirements as m, inspect
print(re.search(r"pip='([0-9.]+)'", inspect.getsource(m)).group(1))
PYEOF
)
mkdir -p "$HOME/.ansible/test/cache"
cp "$src/hack/get_pip_offline.py" "$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
say "pip bootstrap $pip_version: offline stand-in installed"

export ANSIBLE_NOCOLOR=1 PY_COLORS=0
sanity_rc=0 units_rc=0
parts=" ${NEWER_CORE_PARTS:-sanity units} "  # make test runs "units" only (the CI budget), make test-lab both
if [[ $parts == *" sanity "* ]]; then
  say "=== ansible-test sanity --venv --python $py"
  (cd "$copy" && ansible-test sanity --venv --python "$py" --color no --requirements) || sanity_rc=$?
else
  say "=== sanity: not asked for (NEWER_CORE_PARTS=$parts)"
fi

[[ $parts == *" units "* ]] || { say "units: not asked for"; [ $sanity_rc -eq 0 ]; exit; }
say "=== unit tests"
# The collection importable as ansible_collections.skewsafe.kubeadm (as hack/env.sh does on the host); its
# dependency kubernetes.core under /deps (mounted by run.sh).
[ -d /deps/ansible_collections/kubernetes/core ] || { say "kubernetes.core is not mounted at /deps"; exit 1; }
(cd "$copy" && ANSIBLE_COLLECTIONS_PATH=$tree:/deps PYTHONPATH=$tree python -m pytest tests/unit -q) || units_rc=$?

[[ $parts != *" sanity "* ]] || say "sanity: $([ $sanity_rc -eq 0 ] && echo passed || echo "FAILED (exit $sanity_rc)")"
say "units:  $([ $units_rc -eq 0 ] && echo passed || echo "FAILED (exit $units_rc)")"
[ $sanity_rc -eq 0 ] && [ $units_rc -eq 0 ]

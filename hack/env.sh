# shellcheck shell=bash disable=SC2034  # sourced: the variables are used by the caller
# Paths shared by hack/*.sh (sourced). Everything lives outside the repository.
repo=${repo:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
CACHE=${SKEWSAFE_CACHE:-$HOME/.cache/skewsafe}
export SKEWSAFE_CACHE=$CACHE
PY=${PYTHON:-python3}
# Scratch space per checkout.
work="$CACHE/work/$(printf '%s' "$repo" | sha256sum | cut -c1-12)"
# The tool venv is keyed by the pinned requirements and the Python version.
VENV="$CACHE/venv/$(cat "$repo/tests/requirements-dev.txt" "$repo/requirements.txt" <("$PY" -V 2>&1) | sha256sum | cut -c1-12)"
COLL_ROOT="$work/collections"                                   # symlink tree for imports
COLL_COPY="$work/copy/ansible_collections/skewsafe/kubeadm"     # real copy for ansible-test
# Keep Ansible's own state out of $HOME and the repository.
export ANSIBLE_HOME="$work/ansible-home" ANSIBLE_LOCAL_TEMP="$work/ansible-tmp"
export ANSIBLE_COLLECTIONS_PATH="$COLL_ROOT" PYTHONPATH="$COLL_ROOT${PYTHONPATH:+:$PYTHONPATH}"

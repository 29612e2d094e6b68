#!/usr/bin/env bash
# The collection's docs, checked and built the way the model collections do it (antsibull-docs):
#
#   hack/docsite.sh INSTALLED OUT   INSTALLED: a directory with ansible_collections/skewsafe/kubeadm
#                                   installed from the tarball (what users get; tier build-docs
#                                   makes it). Lints the plugin and role docs and the extra docs
#                                   (docs/docsite), then builds the HTML site into OUT/build/html.
#
# Offline: Sphinx cannot reach docs.ansible.com for its intersphinx inventories, so references
# into Ansible's own docs stay unresolved. Exactly those warnings are tolerated; any other warning
# fails the build.
set -euo pipefail
installed=${1:?usage: $0 INSTALLED OUT}
out=${2:?usage: $0 INSTALLED OUT}
installed=$(cd "$installed" && pwd)
coll=$installed/ansible_collections/skewsafe/kubeadm
[ -f "$coll/MANIFEST.json" ] || { echo "docsite: no installed collection under $installed" >&2; exit 1; }
# kubernetes.core (a dependency) as the `ansible` package installed it next to antsibull-docs
site_packages=$(PYTHONPATH='' python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
export ANSIBLE_COLLECTIONS_PATH="$installed:$site_packages" PYTHONPATH=''

(cd "$coll" && antsibull-docs lint-collection-docs --plugin-docs .)
echo "docsite: lint-collection-docs --plugin-docs: no findings"

rm -rf "$out" && mkdir -p "$out" && chmod 0755 "$out" # sphinx-init: owned by us, writable by us only
antsibull-docs sphinx-init --use-current --dest-dir "$out" skewsafe.kubeadm >/dev/null
sed -i 's/ -W --keep-going$/ --keep-going/' "$out/build.sh" # warnings are judged below instead
if ! "$out/build.sh" >"$out/build.log" 2>&1; then
  tail -30 "$out/build.log" >&2
  exit 1
fi
# (labels of Ansible's docs and of plugins outside this collection, ansible.builtin and kubernetes.core)
tolerated="failed to reach any of the inventories|intersphinx inventory|undefined label: '(ansible_configuration_settings|common_return_values|action_plugins|ansible_collections\.(ansible\.builtin|kubernetes\.core)\.[a-z0-9_]+)'"
# (the lines after "failed to reach any of the inventories" name the unreachable URLs)
other=$(grep -E 'WARNING|ERROR' "$out/build.log" | grep -vE "$tolerated" || true)
if [ -n "$other" ]; then
  echo "docsite: sphinx warnings:" >&2
  echo "$other" >&2
  exit 1
fi
for page in index.html collections/skewsafe/kubeadm/index.html collections/skewsafe/kubeadm/docsite/guide_upgrade.html \
  collections/skewsafe/kubeadm/mvp_check_module.html; do
  [ -s "$out/build/html/$page" ] || { echo "docsite: $page was not built" >&2; exit 1; }
done
echo "docsite: $(find "$out/build/html" -name '*.html' | wc -l) pages in $out/build/html"

"""Render every plugin and role of the installed collection with ansible-doc; fail on any error.

python hack/check_docs.py <collections path that holds ansible_collections/skewsafe/kubeadm>
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

COLLECTION = "skewsafe.kubeadm"
PLUGIN_TYPES = ("module", "filter", "test", "lookup", "callback", "role")


def main(path: str) -> int:
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=path)
    failures, rendered = [], 0
    for plugin_type in PLUGIN_TYPES:
        listing = subprocess.run(
            ["ansible-doc", "-t", plugin_type, "--list", "--json", COLLECTION],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if listing.returncode != 0:
            failures.append(f"ansible-doc --list -t {plugin_type}: {listing.stderr.strip()}")
            continue
        for name in sorted(json.loads(listing.stdout or "{}")):
            doc = subprocess.run(
                ["ansible-doc", "-t", plugin_type, name], capture_output=True, text=True, env=env, check=False
            )
            if doc.returncode != 0 or "ERROR" in doc.stderr or not doc.stdout.strip():
                failures.append(f"ansible-doc -t {plugin_type} {name}: {doc.stderr.strip() or 'no output'}")
            else:
                rendered += 1
                print(f"ok  {plugin_type:8} {name}")
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"ansible-doc: {rendered} rendered, {len(failures)} failed")
    return 1 if failures or rendered == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

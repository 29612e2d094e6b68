"""Which group/version/resources only the newer kube-apiserver serves (never hard-coded).

Both servers are asked for their *local* aggregated discovery (profile=nopeer), so an old server
with MVP on does not report what it would proxy. Two sources:

    python -m bench.discover --kubeconfig K --new https://NEW:6443 --old https://OLD:6443
    python -m bench.discover --harness          # 1 old + 1 new harness server of the pinned versions

The second is for runs (the lab) where no new server exists yet when the load must start.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._apiserver_http import ApiServerClient
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import (
    ACCEPT_V2_NOPEER,
    format_gvr,
    listable,
    parse_aggregated,
)

from .targets import load_credentials


def local_discovery(client: ApiServerClient, url: str) -> dict:
    gvrs = {}
    for path in ("/api", "/apis"):
        resp = client.get(url, path, {"Accept": ACCEPT_V2_NOPEER})
        if resp.status != 200:
            raise RuntimeError(f"{url}{path}: {resp.error or resp.status}")
        gvrs.update(parse_aggregated(resp.json()))
    return gvrs


def new_only(new: dict, old: dict) -> list[str]:
    """Listable GVRs the new server serves itself and the old one does not, as 'g/v/r'."""
    return [format_gvr(g) for g in listable(set(new) - set(old), new)]


def from_servers(kubeconfig: str, new_url: str, old_url: str) -> list[str]:
    client = ApiServerClient(load_credentials(kubeconfig), timeout=10)
    return new_only(local_discovery(client, new_url), local_discovery(client, old_url))


def from_harness() -> dict:
    from skewsafe_harness import Harness
    from skewsafe_harness.pins import new_version, old_version

    old, new = old_version(), new_version()
    with tempfile.TemporaryDirectory(prefix="skewsafe-bench-discover-") as tmp:
        with Harness(Path(tmp), [("old", old), ("new", new)]) as harness:
            urls = {s.name: s.url for s in harness.servers.values()}
            gvrs = from_servers(str(harness.kubeconfig), urls["new"], urls["old"])
    return {"old": old, "new": new, "new_only": gvrs}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.discover", description=__doc__.split("\n\n")[0])
    parser.add_argument("--harness", action="store_true", help="diff the pinned versions on a throwaway harness")
    parser.add_argument("--kubeconfig")
    parser.add_argument("--new", help="URL of a server of the newer version")
    parser.add_argument("--old", help="URL of a server of the older version")
    parser.add_argument("--out", type=Path, help="write JSON here (default: stdout)")
    args = parser.parse_args(argv)
    if args.harness:
        result = from_harness()
    elif args.kubeconfig and args.new and args.old:
        result = {"new_only": from_servers(args.kubeconfig, args.new, args.old)}
    else:
        parser.error("give --harness, or --kubeconfig with --new and --old")
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    else:
        print(text)
    return 0 if result["new_only"] else 1


if __name__ == "__main__":
    sys.exit(main())

from __future__ import annotations

import json
import os
import stat

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _node_prefetch as pf

REPO = "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] http://10.214.0.1:8081/core:/stable:/v1.37/deb/ /"
# apt-cache madison as apt 2.6 prints it (newest first; columns padded)
MADISON = """\
   kubeadm | 1.37.2-1.1 | http://10.214.0.1:8081/core:/stable:/v1.37/deb  Packages
   kubeadm | 1.37.1-1.1 | http://10.214.0.1:8081/core:/stable:/v1.37/deb  Packages
   kubelet | 1.37.2-1.1 | http://10.214.0.1:8081/core:/stable:/v1.37/deb  Packages
   kubectl | 1.37.2-1.1 | http://10.214.0.1:8081/core:/stable:/v1.37/deb  Packages
"""
PRINT_URIS = """\
Reading package lists...
Need to get 60.2 MB of archives.
'http://10.214.0.1:8081/core:/stable:/v1.37/deb/kubeadm_1.37.2-1.1_amd64.deb' kubeadm_1.37.2-1.1_amd64.deb 12550904 SHA256:aa
'http://10.214.0.1:8081/core:/stable:/v1.37/deb/kubelet_1.37.2-1.1_amd64.deb' kubelet_1.37.2-1.1_amd64.deb 39000000 SHA256:bb
'http://10.214.0.1:8081/core:/stable:/v1.37/deb/kubectl_1.37.2-1.1_amd64.deb' kubectl_1.37.2-1.1_amd64.deb 11000000 SHA256:cc
"""
IMAGES = {
    "kind": "Images",
    "apiVersion": "output.kubeadm.k8s.io/v1alpha3",
    "images": [
        "registry.lab:5000/kube-apiserver:v1.37.2",
        "registry.lab:5000/kube-controller-manager:v1.37.2",
        "registry.lab:5000/kube-scheduler:v1.37.2",
        "registry.lab:5000/kube-proxy:v1.37.2",
        "registry.lab:5000/coredns/coredns:v1.12.4",
        "registry.lab:5000/pause:3.10.1",
        "registry.lab:5000/etcd:3.6.5-0",
    ],
}
PULL_ERROR = "failed to resolve reference: connection refused"
CLUSTER = {
    "apiVersion": "kubeadm.k8s.io/v1beta4",
    "kind": "ClusterConfiguration",
    "kubernetesVersion": "v1.36.5",
    "imageRepository": "registry.lab:5000",
}
CRICTL_IMAGES = {
    "images": [
        {"repoTags": ["registry.lab:5000/kube-apiserver:v1.36.5"], "size": "30000000"},
        {"repoTags": ["registry.lab:5000/etcd:3.6.4-0"], "size": "60000000"},
    ]
}


class Node:
    """A node's answers to the commands the prefetch runs; downloads and unpacking write real files."""

    def __init__(self, tmp_path, present=(), update=(0, "", ""), pull_rc=0, download_rc=0, installed=()):
        self.tmp = tmp_path
        self.archives = tmp_path / "archives"
        self.archives.mkdir()
        self.present = set(present)
        self.installed = installed
        self.update = update
        self.pull_rc = pull_rc
        self.download_rc = download_rc
        self.calls: list[list[str]] = []
        self.config_seen = None

    def __call__(self, argv):
        self.calls.append(argv)
        for match, answer in (
            (lambda a: a[0] == "apt-get" and a[-1] == "update", lambda a: self.update),
            (lambda a: a[0] == "apt-cache", lambda a: (0, MADISON, "")),
            (lambda a: a[0] == "dpkg-query", self.dpkg_query),
            (lambda a: "--print-uris" in a, self.print_uris),
            (lambda a: "--download-only" in a, self.download),
            (lambda a: a[0] == "dpkg-deb", self.unpack),
            (lambda a: a[1:4] == ["config", "images", "list"], self.images_list),
            (lambda a: "inspecti" in a, lambda a: (0 if a[-1] in self.present else 1, "", "")),
            (lambda a: a[-3:] == ["images", "-o", "json"], lambda a: (0, json.dumps(CRICTL_IMAGES), "")),
            (lambda a: "pull" in a, lambda a: (self.pull_rc, "", "" if not self.pull_rc else PULL_ERROR)),
        ):
            if match(argv):
                return answer(argv)
        raise AssertionError(f"unexpected command {argv}")

    def dpkg_query(self, argv):
        """dpkg-query -W -f '${Package}=${Version} ${db:Status-Status}\\n': the old version, or the target installed."""
        lines = [f"{n}={'1.37.2-1.1' if n in self.installed else '1.36.5-1.1'} installed" for n in argv[4:]]
        return 0, "\n".join(lines) + "\n", ""

    def print_uris(self, argv):
        cached = {p.name for p in self.archives_of(argv).iterdir()}
        lines = [
            line for line in PRINT_URIS.splitlines() if not line.startswith("'") or line.split(" ")[1] not in cached
        ]
        return 0, "\n".join(lines), ""

    def download(self, argv):
        if self.download_rc:
            return self.download_rc, "", "E: Failed to fetch http://10.214.0.1:8081/... 503"
        for line in pf.parse_print_uris(PRINT_URIS):
            (self.archives_of(argv) / line["file"]).write_bytes(b"x" * 10)
        return 0, "", ""

    def unpack(self, argv):
        binary = os.path.join(argv[3], "usr", "bin", "kubeadm")
        os.makedirs(os.path.dirname(binary))
        with open(binary, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(binary, stat.S_IRWXU)
        return 0, "", ""

    def images_list(self, argv):
        with open(argv[argv.index("--config") + 1]) as f:
            self.config_seen = json.load(f)
        return 0, json.dumps(IMAGES), ""

    def archives_of(self, argv):
        opt = next(a for a in argv if a.startswith("Dir::Cache::archives="))
        return type(self.archives)(opt.split("=", 1)[1])


def params(tmp_path, **over):
    etc = tmp_path / "etc-apt"
    (etc / "sources.list.d").mkdir(parents=True, exist_ok=True)
    (etc / "sources.list.d" / "debian.sources").write_text("Types: deb\nURIs: http://10.214.0.1:8081/debian\n")
    (etc / "sources.list.d" / "kubernetes.list").write_text("deb [trusted=yes] http://old/v1.36/deb/ /\n")
    p = {
        "version": "1.37.2",
        "packages": ["kubeadm", "kubelet", "kubectl"],
        "apt_repo_line": REPO,
        "apt_replace_sources": ["kubernetes.list"],
        "kubeadm_images": None,
        "cluster_configuration": CLUSTER,
        "images": [],
        "images_dir": str(tmp_path),
        "reserve_mib": 1,
        "apt_etc_dir": str(etc),
        "apt_lists_dir": str(tmp_path / "no-lists"),
        "archives_dir": str(tmp_path / "archives"),
    }
    p.update(over)
    return p


def go(tmp_path, node, check=False, **over):
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    return pf.Prefetch(params(tmp_path, **over), node, check, str(scratch)).go()


def test_downloads_the_packages_through_the_nodes_sources_with_the_repository_swapped(tmp_path):
    node = Node(tmp_path)
    out = go(tmp_path, node)
    assert out["problems"] == []
    assert [(p["name"], p["version"], p["fetched"]) for p in out["packages"]] == [
        ("kubeadm", "1.37.2-1.1", True),
        ("kubelet", "1.37.2-1.1", True),
        ("kubectl", "1.37.2-1.1", True),
    ]
    assert out["fetched_bytes"] == 12550904 + 39000000 + 11000000 and out["changed"] is True
    download = next(c for c in node.calls if "--download-only" in c)
    assert download[-3:] == ["kubeadm=1.37.2-1.1", "kubelet=1.37.2-1.1", "kubectl=1.37.2-1.1"]
    assert f"Dir::Cache::archives={tmp_path}/archives/" in download
    parts = tmp_path / "scratch" / "apt" / "sources.list.d"
    assert sorted(os.listdir(parts)) == ["debian.sources", "kubernetes.list"]  # the node's own, Kubernetes swapped
    assert (parts / "kubernetes.list").read_text() == REPO + "\n"


def test_a_second_run_finds_everything_cached_and_changes_nothing(tmp_path):
    node = Node(tmp_path)
    go(tmp_path, node)
    node.calls.clear()
    out = go(tmp_path, node)
    assert out["changed"] is False and out["problems"] == [] and out["fetched_bytes"] == 0
    assert not any("--download-only" in c for c in node.calls)
    assert all(p["path"].startswith(str(tmp_path / "archives")) for p in out["packages"])


def test_check_mode_downloads_into_scratch_only_and_predicts_the_change(tmp_path):
    node = Node(tmp_path)
    out = go(tmp_path, node, check=True, kubeadm_images=None)
    assert out["changed"] is True and out["problems"] == []
    assert os.listdir(tmp_path / "archives") == []  # the node's cache untouched
    assert all(p["fetch"] and not p["fetched"] for p in out["packages"])


# apt-get update through a dead proxy, as apt 2.6 printed it on a lab node (2026-12-07): rc 0, the cause on the line
# after Err:
DEAD_PROXY_UPDATE = """\
Err:1 http://10.214.1.1:8080/v1.37/deb  InRelease
  Could not connect to 10.214.1.250:3128 (10.214.1.250). - connect (113: No route to host)
Reading package lists...
"""
DEAD_PROXY_STDERR = """\
W: Failed to fetch http://10.214.1.1:8080/v1.37/deb/InRelease  Could not connect to 10.214.1.250:3128 (10.214.1.250). - connect (113: No route to host)
W: Some index files failed to download. They have been ignored, or old ones used instead.
"""


def test_an_unreachable_repository_is_a_problem_named_with_apts_own_words(tmp_path):
    node = Node(tmp_path, update=(0, DEAD_PROXY_UPDATE, DEAD_PROXY_STDERR))
    out = go(tmp_path, node)
    assert out["changed"] is False and out["packages"] == []
    assert out["problems"] == [
        "apt-get update through the node's own sources failed (rc 0): Err:1 http://10.214.1.1:8080/v1.37/deb  InRelease"
        " (Could not connect to 10.214.1.250:3128 (10.214.1.250). - connect (113: No route to host)); W: Failed to fetch"
        " http://10.214.1.1:8080/v1.37/deb/InRelease  Could not connect to 10.214.1.250:3128 (10.214.1.250). - connect"
        " (113: No route to host)"
    ]


def test_an_update_that_fails_with_rc_100_is_a_problem():
    assert pf.update_problem(100, "", "E: The repository 'x' is not signed.").endswith(
        "(rc 100): E: The repository 'x' is not signed."
    )
    assert pf.update_problem(0, "Hit:1 http://x  InRelease\nReading package lists...", "") is None


def test_a_version_the_repository_lacks_is_a_problem_and_nothing_is_downloaded(tmp_path):
    node = Node(tmp_path)
    out = go(tmp_path, node, version="1.37.9")
    assert len(out["problems"]) == 3 and "kubeadm 1.37.9 is not offered" in out["problems"][0]
    assert not any("--download-only" in c for c in node.calls)


def test_a_failed_download_is_a_problem(tmp_path):
    out = go(tmp_path, Node(tmp_path, download_rc=100))
    assert out["problems"] and "could not download" in out["problems"][0] and "503" in out["problems"][0]


def test_images_come_from_the_target_kubeadm_on_the_clusters_configuration(tmp_path):
    node = Node(tmp_path, present={"registry.lab:5000/pause:3.10.1"})
    out = go(tmp_path, node, kubeadm_images=[])
    assert node.config_seen == dict(CLUSTER, kubernetesVersion="v1.37.2")
    assert [i["image"] for i in out["images"]] == IMAGES["images"]
    assert [i["pulled"] for i in out["images"]] == [True] * 5 + [False, True]
    assert out["problems"] == []
    unpack = next(c for c in node.calls if c[0] == "dpkg-deb")
    assert unpack[2] == str(tmp_path / "archives" / "kubeadm_1.37.2-1.1_amd64.deb")


def test_a_worker_keeps_only_the_images_it_runs(tmp_path):
    out = go(tmp_path, Node(tmp_path), kubeadm_images=["kube-proxy", "pause"])
    assert [i["image"] for i in out["images"]] == [
        "registry.lab:5000/kube-proxy:v1.37.2",
        "registry.lab:5000/pause:3.10.1",
    ]


def test_an_image_that_cannot_be_pulled_is_a_problem(tmp_path):
    node = Node(tmp_path, pull_rc=1)
    out = go(tmp_path, node, kubeadm_images=["etcd"])
    assert out["problems"] == [
        "cannot pull registry.lab:5000/etcd:3.6.5-0 (rc 1): failed to resolve reference: connection refused"
    ]


def test_check_mode_pulls_nothing_and_lists_what_is_missing(tmp_path):
    node = Node(tmp_path)
    out = go(tmp_path, node, check=True, kubeadm_images=["etcd"])
    assert out["images"] == [{"image": "registry.lab:5000/etcd:3.6.5-0", "present": False, "pulled": False}]
    assert not any("pull" in c for c in node.calls)


def test_too_little_disk_is_a_problem_before_anything_is_downloaded(tmp_path):
    free = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize
    node = Node(tmp_path)
    out = go(tmp_path, node, reserve_mib=free // pf.MIB + 1)
    assert len(out["problems"]) == 1 and "MiB needed (packages (59 MiB" in out["problems"][0]
    assert not any("--download-only" in c for c in node.calls)


def test_needs_on_one_file_system_add_up(tmp_path):
    rows, problems = pf.space_plan(
        [
            {"path": str(tmp_path / "a" / "b"), "bytes": 3 * pf.MIB, "what": "x"},
            {"path": str(tmp_path), "bytes": 2 * pf.MIB, "what": "y"},
        ],
        pf.MIB,
    )
    assert len(rows) == 1 and rows[0]["need"] == 6 * pf.MIB and rows[0]["path"] == str(tmp_path)
    assert problems == []


def test_kubeadms_backup_and_the_snapshot_are_counted_on_a_stacked_control_plane(tmp_path):
    data = tmp_path / "etcd" / "member" / "snap"
    data.mkdir(parents=True)
    (data / "db").write_bytes(b"0" * 4096)
    (tmp_path / "etcd" / "member" / "wal").mkdir()
    (tmp_path / "etcd" / "member" / "wal" / "0.wal").write_bytes(b"0" * 1024)
    p = pf.Prefetch(
        params(tmp_path, etcd_data_dir=str(tmp_path / "etcd"), snapshot_dir=str(tmp_path / "snap")),
        Node(tmp_path),
        False,
        str(tmp_path),
    )
    assert p.backup_needs() == [
        {"path": pf.KUBEADM_BACKUP_DIR, "bytes": 5120, "what": "kubeadm's copy of the etcd data"},
        {"path": str(tmp_path / "snap"), "bytes": 4096, "what": "the etcd snapshot"},
    ]


def test_no_kubeadm_to_list_images_is_a_problem(tmp_path):
    out = go(tmp_path, Node(tmp_path), packages=["kubelet"], kubeadm_images=[])
    assert out["problems"] == [
        "the target kubeadm is needed to list the target images: add kubeadm to packages or give kubeadm_path"
    ]


@pytest.mark.parametrize(
    ("ref", "name"),
    [
        ("registry.k8s.io/coredns/coredns:v1.12.1", "coredns"),
        ("registry.lab:5000/pause:3.10.1", "pause"),
        ("etcd@sha256:abc", "etcd"),
        ("registry.lab:5000/kube-proxy", "kube-proxy"),
    ],
)
def test_image_short_names(ref, name):
    assert pf.image_short_name(ref) == name


def test_a_configuration_that_is_not_a_cluster_configuration_is_refused():
    with pytest.raises(ValueError, match="kind ClusterConfiguration"):
        pf.images_config({"kind": "InitConfiguration"}, "1.37.2")


def test_a_pre_release_is_found_as_upstream_spells_its_package():
    madison = "   kubeadm | 1.38.0~rc.1-1.1 | http://x/core:/stable:/v1.38/deb  Packages\n"
    assert pf.pick_version(madison, "kubeadm", "1.38.0-rc.1") == "1.38.0~rc.1-1.1"
    assert pf.pick_version(madison, "kubeadm", "1.38.0") is None


def test_a_node_already_at_the_target_fetches_nothing_and_lists_images_with_its_own_kubeadm(tmp_path):
    node = Node(tmp_path, installed=("kubeadm", "kubelet", "kubectl"))
    out = go(tmp_path, node, kubeadm_images=["kube-proxy"], installed_kubeadm="/opt/kubeadm")
    assert out["problems"] == [] and out["fetched_bytes"] == 0
    assert [(p["name"], p["installed"], p["fetch"]) for p in out["packages"]] == [
        ("kubeadm", True, False),
        ("kubelet", True, False),
        ("kubectl", True, False),
    ]
    assert not any("--print-uris" in c or c[0] == "dpkg-deb" for c in node.calls)
    assert next(c for c in node.calls if c[1:4] == ["config", "images", "list"])[0] == "/opt/kubeadm"


def test_only_what_is_not_installed_is_downloaded(tmp_path):
    node = Node(tmp_path, installed=("kubectl",))
    out = go(tmp_path, node)
    download = next(c for c in node.calls if "--download-only" in c)
    assert download[-2:] == ["kubeadm=1.37.2-1.1", "kubelet=1.37.2-1.1"]
    assert out["problems"] == []


def test_a_failed_pull_is_named_with_crictls_last_line():
    # crictl pull through a node without a route out (the lab, 2026-12-07), shortened
    stderr = (
        'E1207 15:47:16.994627    1534 remote_image.go:250] "PullImage from image service failed" err="rpc error"\n'
        'time="2026-12-07T15:47:16Z" level=fatal msg="pulling image: failed to resolve image: i/o timeout"\n'
    )
    assert (
        pf.last_words(stderr)
        == 'time="2026-12-07T15:47:16Z" level=fatal msg="pulling image: failed to resolve image: i/o timeout"'
    )
    assert pf.last_words("") == "(nothing on stderr)"


# kubeadm 1.37's preflight output as RunChecks and handleError write it (cmd/kubeadm/app/preflight/checks.go), for a
# Corefile with a plugin the CoreDNS migration does not know (its message spans two lines).
PREFLIGHT_FAILED = (
    "[upgrade/preflight] Running preflight checks\n"
    "\t[WARNING SystemVerification]: cgroups v1 support is in maintenance mode\n"
    "[preflight] Some fatal errors occurred:\n"
    "\t[ERROR CoreDNSUnsupportedPlugins]: CoreDNS cannot migrate the following plugins:\n"
    '[Plugin "foo" is unsupported by this migration tool in 1.14.2.]\n'
    "[preflight] If you know what you are doing, you can make a check non-fatal with `--ignore-preflight-errors=...`\n"
    "error execution phase preflight: preflight checks failed\n"
    "To see the stack trace of this error execute with --v=5 or higher\n"
)


def test_preflight_findings_keep_a_message_over_several_lines():
    found = pf.preflight_findings(PREFLIGHT_FAILED)
    assert found == {
        "errors": [
            'CoreDNSUnsupportedPlugins: CoreDNS cannot migrate the following plugins: [Plugin "foo" is unsupported'
            " by this migration tool in 1.14.2.]"
        ],
        "warnings": ["SystemVerification: cgroups v1 support is in maintenance mode"],
    }


@pytest.mark.parametrize(
    ("step", "version", "expected"),
    [
        ("apply", "1.37.2", ["upgrade", "apply", "phase", "preflight", "v1.37.2", "--dry-run", "--yes"]),
        (
            "apply",
            "1.38.0-rc.1",
            ["phase", "preflight", "v1.38.0-rc.1", "--dry-run", "--yes", "--allow-experimental-upgrades"],
        ),
        ("node", "1.37.2", ["upgrade", "node", "phase", "preflight"]),
    ],
)
def test_preflight_argv_runs_the_step_s_own_phase(step, version, expected):
    argv = pf.preflight_argv("/k", step, version, ["SystemVerification"], "/scratch/d")
    assert argv[-1] == "--ignore-preflight-errors=SystemVerification"
    joined = " ".join(argv)
    assert " ".join(expected) in joined
    assert ("KUBEADM_UPGRADE_DRYRUN_DIR=/scratch/d" in argv) == (step == "apply")


class PreflightNode(Node):
    def __init__(self, tmp_path, preflight=(0, "[upgrade/preflight] Running preflight checks\n", "")):
        super().__init__(tmp_path)
        self.preflight = preflight

    def __call__(self, argv):
        if "preflight" in argv:
            self.calls.append(argv)
            return self.preflight
        return super().__call__(argv)


def test_the_target_kubeadm_s_preflight_runs_last_and_its_failure_is_a_named_problem(tmp_path):
    node = PreflightNode(tmp_path, preflight=(1, "", PREFLIGHT_FAILED))
    out = go(
        tmp_path, node, kubeadm_images=[], kubeadm_preflight="apply", ignore_preflight_errors=["SystemVerification"]
    )
    [problem] = out["problems"]
    assert problem.startswith("kubeadm 1.37.2's own preflight of its 'kubeadm upgrade apply' step fails (rc 1):")
    assert "CoreDNSUnsupportedPlugins" in problem and 'Plugin "foo"' in problem
    assert out["kubeadm_preflight"]["ran"] and out["kubeadm_preflight"]["rc"] == 1
    # the kubeadm that listed the images ran the preflight: unpacked once
    assert sum(1 for c in node.calls if c[0] == "dpkg-deb") == 1
    assert node.calls[-1][-1] == "--ignore-preflight-errors=SystemVerification"


def test_a_passing_preflight_is_recorded_and_no_problem(tmp_path):
    node = PreflightNode(tmp_path)
    out = go(tmp_path, node, kubeadm_preflight="node")
    assert out["problems"] == [] and out["kubeadm_preflight"] == {
        "step": "node",
        "ran": True,
        "rc": 0,
        "errors": [],
        "warnings": [],
    }


def test_check_mode_does_not_run_the_node_preflight_of_a_control_plane(tmp_path):
    node = PreflightNode(tmp_path)
    out = go(tmp_path, node, check=True, kubeadm_preflight="node", control_plane=True)
    assert out["kubeadm_preflight"]["ran"] is False and "check mode" in out["kubeadm_preflight"]["why"]
    assert not [c for c in node.calls if "preflight" in c]


def test_no_preflight_unless_asked(tmp_path):
    node = PreflightNode(tmp_path)
    assert go(tmp_path, node)["kubeadm_preflight"] is None
    assert not [c for c in node.calls if "preflight" in c]

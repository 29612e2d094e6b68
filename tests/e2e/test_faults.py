"""Fault injection on the real lab: one upgrade, interrupted again and again, each rerun the same command.

`make test-lab` runs it (tier `faults`; the default e2e tier leaves it out). SIGKILL of
ansible-playbook is what an AWX cancel or a lost controller does. Each kill is triggered from observed
state (a manifest, a package version, a Pod's deletion), never from a sleep:

The default order (skewsafe_control_plane_order=components_first): every control plane's components, one at a
time behind the gates, then the control-plane kubelets one at a time, then the workers. MVP is turned on by the
upgrade itself (a fresh lab), so the first control plane is not re-rendered at the running version: kubeadm upgrade
apply renders its flag.

(p) before it, the prefetch playbook: a worker whose apt configuration cannot reach the repository and a control
    plane missing a target image it cannot pull stop it with nothing changed; fixed, every node has its target packages
    in its package cache (the story's upgrades then install from it);
(a) the first control plane during `kubeadm upgrade apply`, after the kube-apiserver manifest changed
    (kubeadm is killed on the node too, so the apply is really half done);
(b) another control plane between `kubeadm upgrade node` and its kubelet upgrade (in this order every control
    plane's components come before any kubelet, so the first control plane's kubelet is still old too);
(g) the first control-plane kubelet (the first control plane's, once every control plane's components run the
    target) after its packages and before its restart;
(h) the second control plane's new kubelet refuses to start (a gate it no longer knows, added after preflight):
    the previous kubelet is installed and started again, its etcd member and kube-apiserver run again;
(e) a worker whose PodDisruptionBudget never yields: the run stops before that node's kubelet is
    touched, names the PDB, and the node is schedulable again; relaxed, the rerun goes on;
(c) a worker after its packages were upgraded and before its kubelet restarted;
(d) during the drain of a worker whose Pod has a long termination grace period;
(f) a worker the operator cordoned before the run stays cordoned afterwards.
After the last rerun everything is at the target and nothing was lost, and a static Pod kubeadm does not own on the
third control plane (it traps SIGTERM and needs 8 s to stop) was given its grace period at its kubelet restart.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import threading
import time

import pytest
import yaml
from conftest import CONTROL_PLANES, NEW, OLD, WORKERS, ReadyWatcher, gate_proved

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _manifest
from skewsafe_harness.pins import k8s_bin

pytestmark = pytest.mark.faults

TARGET = f"skewsafe_kubernetes_version={NEW}"
CORDON_MARK = "skewsafe.kubeadm/cordoned"
COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
FIRST, SECOND, THIRD = CONTROL_PLANES
PEER_CA_FLAG = "--peer-ca-file=/etc/kubernetes/pki/ca.crt"
BLOCKED, OPERATORS = WORKERS[0], WORKERS[1]  # upgraded in this order (serial 1)
SLOW_GRACE_S = 60
LOCK_LEASE = "skewsafe-kubeadm-upgrade"

WORKLOAD = f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: steady, namespace: default}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: steady}}}}
  template:
    metadata: {{labels: {{app: steady}}}}
    spec:
      terminationGracePeriodSeconds: 1
      # with one worker cordoned by the operator, the pods need room on the control planes
      tolerations: [{{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}}]
      containers:
      - {{name: pause, image: "registry.k8s.io/pause:3.10.2", imagePullPolicy: Never}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: steady, namespace: default}}
spec:
  minAvailable: 2
  selector: {{matchLabels: {{app: steady}}}}
---
# Two replicas that can only run on {BLOCKED}: the drain evicts one, its replacement cannot start
# anywhere, and the budget then refuses the second eviction for ever. Preflight cannot see it coming
# (the budget allows one disruption when the run starts).
apiVersion: apps/v1
kind: Deployment
metadata: {{name: pinned, namespace: default}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: pinned}}}}
  template:
    metadata: {{labels: {{app: pinned}}}}
    spec:
      terminationGracePeriodSeconds: 1
      nodeSelector: {{kubernetes.io/hostname: {BLOCKED}}}
      containers:
      - {{name: pause, image: "registry.k8s.io/pause:3.10.2", imagePullPolicy: Never}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: pinned, namespace: default}}
spec:
  minAvailable: 1
  selector: {{matchLabels: {{app: pinned}}}}
---
# A Pod that needs its whole grace period to stop (it ignores SIGTERM), like a database flushing.
apiVersion: apps/v1
kind: Deployment
metadata: {{name: slow-stop, namespace: default}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: slow-stop}}}}
  template:
    metadata: {{labels: {{app: slow-stop}}}}
    spec:
      terminationGracePeriodSeconds: {SLOW_GRACE_S}
      nodeSelector: {{kubernetes.io/hostname: {OPERATORS}}}
      containers:
      - name: slow
        image: registry.k8s.io/kube-proxy:v{OLD}
        imagePullPolicy: Never
        command: [/bin/bash, -c, "trap '' TERM; while :; do sleep 1; done"]
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: before-upgrade, namespace: default}}
data: {{created: before}}
"""

# A static Pod kubeadm does not own (as kube-vip or haproxy run in kubeadm's HA guide) that needs 8 s after SIGTERM:
# the new kubelet would kill it as an orphan with 1 s, the kubelet step stops it first with its own 20 s.
TERM_LOG = "/var/log/skewsafe-term/term.log"
TERM_STOP_S = 8
TERM_LOGGER = f"""
apiVersion: v1
kind: Pod
metadata: {{name: term-logger, namespace: default}}
spec:
  terminationGracePeriodSeconds: 20
  containers:
  - name: term-logger
    image: registry.k8s.io/kube-proxy:v{OLD}
    imagePullPolicy: Never
    command:
    - /bin/bash
    - -c
    - >-
      echo started $(date +%s) >>/log/term.log;
      trap 'echo term $(date +%s) >>/log/term.log; sleep {TERM_STOP_S}; echo clean $(date +%s) >>/log/term.log; exit 0' TERM;
      while :; do sleep 1; done
    volumeMounts: [{{name: log, mountPath: /log}}]
  volumes: [{{name: log, hostPath: {{path: /var/log/skewsafe-term, type: DirectoryOrCreate}}}}]
"""

done: dict[str, bool] = {}
story: list[dict] = []  # per kill point: what the rerun did and how long it took, for the closing note


def after(step: str) -> None:
    if not done.get(step):
        pytest.fail(f"needs step '{step}' to have passed first (the cluster is not in the state this step starts from)")


def record(point: str, run, **facts) -> None:
    story.append(
        {"point": point, "seconds": round(run.seconds), "returncode": run.returncode, "killed": run.killed, **facts}
    )
    print(f"\n[{point}] {'killed' if run.killed else 'rc=' + str(run.returncode)} after {run.seconds:.0f}s {facts}")


def manifest_versions(lab, node: str) -> dict[str, str | None]:
    versions = {}
    for component in COMPONENTS:
        text = lab.node_exec(node, "cat", f"/etc/kubernetes/manifests/{component}.yaml", check=False)
        versions[component] = _manifest.summary(_manifest.load(text))["version"] if text else None
    return versions


def cluster_version(lab) -> str:
    config = lab.json("-n", "kube-system", "get", "configmap", "kubeadm-config")["data"]["ClusterConfiguration"]
    return yaml.safe_load(config)["kubernetesVersion"]


def kube_proxy_version(lab) -> str | None:
    result = lab.kubectl("-n", "kube-system", "get", "daemonset", "kube-proxy", "-o", "json", check=False)
    if result.returncode != 0:
        return None
    containers = json.loads(result.stdout)["spec"]["template"]["spec"]["containers"]
    return _manifest.image_tag(next(c["image"] for c in containers if c["name"] == "kube-proxy"))


def apiserver_manifest(lab, node: str) -> str:
    return lab.node_exec(node, "cat", "/etc/kubernetes/manifests/kube-apiserver.yaml", check=False)


def node_kubelet(lab, node: str) -> str:
    return lab.nodes()[node]["status"]["nodeInfo"]["kubeletVersion"]


def package_version(lab, node: str, package: str = "kubelet") -> str:
    return lab.node_exec(node, "dpkg-query", "-W", "-f", "${Version}", package)


watch: dict[str, ReadyWatcher] = {}


def test_workload_and_an_operator_cordon(lab, tmp_path):
    manifest = tmp_path / "workload.yaml"
    manifest.write_text(WORKLOAD)
    lab.kubectl("apply", "-f", str(manifest))
    for deployment in ("steady", "pinned", "slow-stop"):
        lab.kubectl("rollout", "status", f"deployment/{deployment}", "--timeout=180s")
    lab.kubectl("cordon", OPERATORS)  # (f): after slow-stop is running there
    lab.node_exec(THIRD, "sh", "-c", f"cat >/etc/kubernetes/manifests/term-logger.yaml <<'EOF'\n{TERM_LOGGER}EOF")
    deadline = time.monotonic() + 120
    while not lab.node_exec(THIRD, "crictl", "ps", "--name", "^term-logger$", "--state", "running", "--quiet").strip():
        assert time.monotonic() < deadline, f"the static Pod term-logger does not run on {THIRD}"
        time.sleep(2)
    watch["ready"] = ReadyWatcher(lab).start()
    done["workload"] = True


DEAD_PROXY = "/etc/apt/apt.conf.d/99skewsafe-e2e-dead-proxy"
HIDDEN_IMAGE = f"registry.k8s.io/kube-scheduler:v{NEW}"
HIDDEN_TAR = "/var/lib/skewsafe-e2e-hidden-kube-scheduler.tar"


def package_cache(lab, node: str) -> list[str]:
    out = lab.node_exec(node, "sh", "-c", f"ls /var/cache/apt/archives/ | grep '_{NEW}-' || true")
    return sorted(out.split())


def set_corefile(lab, text: str) -> None:
    lab.kubectl(
        "-n",
        "kube-system",
        "patch",
        "configmap",
        "coredns",
        "--type",
        "merge",
        "-p",
        json.dumps({"data": {"Corefile": text}}),
    )


def test_p_each_node_proves_it_can_take_its_step_before_the_first_change(lab):
    """(p) a worker whose apt configuration cannot reach the repository, a control plane missing a target image it
    cannot pull (the lab has no registry) and a Corefile with a plugin kubeadm's CoreDNS migration does not know (the
    target kubeadm's own preflight of the first control plane's step refuses it) stop the upgrade in its prefetch
    step, all three named, before any change; fixed, the prefetch playbook leaves every node's target packages in its
    package cache; a rerun fetches nothing."""
    after("workload")
    before = lab.snapshot_state()
    lab.node_exec(BLOCKED, "sh", "-c", f"echo 'Acquire::http::Proxy \"http://10.214.1.250:3128\";' > {DEAD_PROXY}")
    # hidden by export and removal, brought back by import (which unpacks it again, as the lab loaded it): a retag
    # kept it listed, but the first faults run with (p) inside the story then timed out starting cp2's new
    # kube-scheduler in point g
    lab.node_exec(SECOND, "ctr", "-n", "k8s.io", "images", "export", HIDDEN_TAR, HIDDEN_IMAGE)
    lab.node_exec(SECOND, "ctr", "-n", "k8s.io", "images", "rm", HIDDEN_IMAGE)
    corefile = lab.json("-n", "kube-system", "get", "configmap", "coredns")["data"]["Corefile"]
    assert ".:53 {" in corefile, corefile
    set_corefile(lab, corefile.replace(".:53 {", ".:53 {\n    skewsafefoo", 1))
    try:
        stopped = lab.playbook("upgrade", "-e", TARGET)
    finally:
        set_corefile(lab, corefile)
        lab.node_exec(BLOCKED, "rm", "-f", DEAD_PROXY)
        lab.node_exec(SECOND, "ctr", "-n", "k8s.io", "images", "import", HIDDEN_TAR, check=False)
        lab.node_exec(SECOND, "rm", "-f", HIDDEN_TAR, check=False)
    record("p: upgrade with a dead apt proxy and a missing image", stopped)
    assert stopped.returncode != 0, stopped.tail()
    assert "3 node(s) cannot take their upgrade step" in stopped.output, stopped.tail()
    assert f"{FIRST}: kubeadm {NEW}'s own preflight of its 'kubeadm upgrade apply' step fails" in stopped.output
    assert 'CoreDNSUnsupportedPlugins: CoreDNS cannot migrate the following plugins: [Plugin "skewsafefoo"' in (
        stopped.output
    ), stopped.tail()
    assert f"{BLOCKED}: apt-get update through the node's own sources failed" in stopped.output, stopped.tail()
    assert f"{SECOND}: cannot pull {HIDDEN_IMAGE}" in stopped.output, stopped.tail()
    assert lab.snapshot_state() == before, "the upgrade stopped in its prefetch step changed a node"
    # stopped in the prefetch play: the snapshot and MVP plays (the first changes of a run) never started
    assert "PLAY [Etcd backup" not in stopped.output and "PLAY [Enable MVP" not in stopped.output, stopped.tail()
    # nothing was changed, so the lock was given up: the rerun after the fix need not wait for it to expire
    assert lab.kubectl("-n", "kube-system", "get", "lease", LOCK_LEASE, check=False).returncode != 0, stopped.tail()
    assert lab.node_exec(SECOND, "crictl", "inspecti", "-q", HIDDEN_IMAGE, check=False).strip(), "image not restored"
    # listed is not enough: the restored image must run (the kubelet starts it in a later point)
    ran = lab.node_exec(
        SECOND,
        "ctr",
        "-n",
        "k8s.io",
        "run",
        "--rm",
        HIDDEN_IMAGE,
        "skewsafe-e2e-hidden-check",
        "/usr/local/bin/kube-scheduler",
        "--version",
        check=False,
    )
    assert f"v{NEW}" in ran, f"the restored {HIDDEN_IMAGE} does not run on {SECOND}: {ran}"

    run = lab.playbook("prefetch", "-e", TARGET)
    fetched = {node: package_cache(lab, node) for node in CONTROL_PLANES + WORKERS}
    record("p: prefetch after the fix", run, cached={n: len(f) for n, f in fetched.items()})
    assert run.returncode == 0, run.tail()
    for node, files in fetched.items():
        assert {f.split("_")[0] for f in files} >= {"kubeadm", "kubelet", "kubectl"}, (node, files)
    assert lab.snapshot_state() == before, "prefetch installed or restarted something"
    rerun = lab.playbook("prefetch", "-e", TARGET)
    record("p: prefetch rerun", rerun)
    assert rerun.returncode == 0, rerun.tail()
    nothing = [
        n
        for n in CONTROL_PLANES + WORKERS
        if f"{n}: 0 package(s) downloaded (0.0 MiB), 0 image(s) pulled" in rerun.output
    ]
    assert nothing == CONTROL_PLANES + WORKERS, rerun.tail()
    done["prefetch"] = True


def test_a_killed_during_kubeadm_upgrade_apply(lab):
    after("workload")
    seen = {"first_rerendered_at_old": False}

    def apiserver_manifest_changed():
        text = apiserver_manifest(lab, FIRST)
        version = _manifest.summary(_manifest.load(text))["version"] if text else None
        # Enabling MVP before an upgrade leaves the first control plane to kubeadm upgrade apply: its kube-apiserver
        # must never run the old version with the flag (a restart the upgrade makes anyway).
        if version == f"v{OLD}" and PEER_CA_FLAG in text:
            seen["first_rerendered_at_old"] = True
        return version == f"v{NEW}"

    # A second run (another operator, a second AWX job) started seconds after this one took the lock: it must stop
    # before any change and name the first. It skips its preflight so that it reaches the lock at once.
    second: dict = {}

    def lock_holder():
        held = lab.kubectl(
            "-n", "kube-system", "get", "lease", LOCK_LEASE, "-o", "jsonpath={.spec.holderIdentity}", check=False
        )
        return held.stdout.strip() if held.returncode == 0 else None

    # An earlier failed run (point p stops an upgrade after its lock) leaves its Lease to expire: the second run
    # starts once this run holds the lock, not on that one.
    stale = lock_holder()

    def start_a_second_run_once_locked():
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline and not second.get("started"):
            holder = lock_holder()
            if holder and holder != stale:
                second["started"] = time.monotonic()
                second["run"] = lab.playbook("upgrade", "-e", TARGET, "--skip-tags", "preflight")
                return
            time.sleep(1)

    rival = threading.Thread(target=start_a_second_run_once_locked, daemon=True)
    rival.start()
    run = lab.playbook("upgrade", "-e", TARGET, kill_state=apiserver_manifest_changed)
    rival.join(timeout=600)
    assert run.killed, "the run ended before the kube-apiserver manifest changed: " + run.tail()
    assert "run" in second, "the second run never started (the first run's lock Lease never appeared)"
    rival_run = second["run"]
    record("a': a second run while the first holds the lock", rival_run)
    assert rival_run.returncode != 0 and not rival_run.killed, rival_run.tail()
    assert "another run holds this cluster's upgrade lock" in rival_run.output, rival_run.tail()
    assert "playbook upgrade, started" in rival_run.output, rival_run.tail()
    # stopped in the lock play, before the snapshot and MVP (the first changes of a run)
    assert "Enable MVP |" not in rival_run.output and "Etcd backup | Snapshot" not in rival_run.output, rival_run.tail()
    # The controller is gone; so is kubeadm on the node (a cancelled job whose SSH session dies with it).
    lab.node_exec(FIRST, "pkill", "-KILL", "-x", "kubeadm", check=False)
    left = manifest_versions(lab, FIRST)
    behind = [c for c, v in left.items() if v != f"v{NEW}"] + (
        ["kubeadm-config"] if cluster_version(lab) != f"v{NEW}" else []
    )
    record("a: killed in kubeadm upgrade apply", run, left_behind=behind)
    assert behind, f"apply had already finished when it was killed: {left}"
    assert node_kubelet(lab, FIRST) == f"v{OLD}"
    assert manifest_versions(lab, SECOND)["kube-apiserver"] == f"v{OLD}", f"{SECOND} was touched"
    # MVP on before the upgrade, with one restart fewer: the others re-rendered at the running version, the first not.
    assert not seen["first_rerendered_at_old"], f"{FIRST} was re-rendered at v{OLD} before kubeadm upgrade apply"
    assert f"{FIRST}: the first control plane: kubeadm upgrade apply {NEW} renders the flag" in run.output, run.tail()
    for cp in (SECOND, THIRD):
        assert PEER_CA_FLAG in apiserver_manifest(lab, cp), f"{cp} was not re-rendered with the flag before the upgrade"
    assert PEER_CA_FLAG in apiserver_manifest(lab, FIRST), "kubeadm upgrade apply did not render the flag"
    done["a"] = True


def test_b_killed_between_kubeadm_upgrade_node_and_the_kubelet(lab):
    after("a")

    def upgrade_node_done():
        return all(v == f"v{NEW}" for v in manifest_versions(lab, SECOND).values())

    run = lab.playbook("upgrade", "-e", TARGET, kill_state=upgrade_node_done)
    assert run.killed, f"the run ended before {SECOND}'s kubeadm upgrade node: " + run.tail()
    # (a)'s killed run never gave its lock up: this run took it over once it had expired, and said so.
    assert "Took over the upgrade lock of" in run.output, run.tail()
    # The rerun finished the half-done apply on the first control plane, cluster-wide parts included.
    assert manifest_versions(lab, FIRST) == dict.fromkeys(COMPONENTS, f"v{NEW}")
    assert cluster_version(lab) == f"v{NEW}"
    # Components first: no control-plane kubelet before every control plane's components are at the target.
    assert node_kubelet(lab, FIRST) == f"v{OLD}", f"{FIRST}'s kubelet was upgraded before the other control planes"
    assert not lab.nodes()[FIRST]["spec"].get("unschedulable"), f"{FIRST} cordoned before the kubelet phase"
    assert manifest_versions(lab, THIRD)["kube-apiserver"] == f"v{OLD}", f"{THIRD} was touched"
    # The first mixed gate after kubeadm upgrade apply proved proxying on every old server.
    gate = gate_proved(run.output, FIRST)
    assert gate and gate[0] == "mixed" and gate[1] == {SECOND, THIRD} and gate[2] == gate[3] > 0, gate
    record("b: killed after kubeadm upgrade node", run, rerun_of="a", first_control_plane="components finished")
    assert node_kubelet(lab, SECOND) == f"v{OLD}", f"{SECOND}'s kubelet was already upgraded"
    done["b"] = True


def test_g_killed_in_the_first_control_plane_kubelet_before_its_restart(lab):
    after("b")
    # Every control plane's components come first, so the first kubelet restart of this run is a control plane's:
    # the first control plane's (the kubelet phase takes them in the same order).
    run = lab.playbook("upgrade", "-e", TARGET, kill_when=lambda line: "Node upgrade | Restart kubelet" in line)
    assert run.killed, "the run ended before a kubelet restart: " + run.tail()
    record("g: killed before the first control-plane kubelet restart", run, rerun_of="b")
    for cp in CONTROL_PLANES:
        assert manifest_versions(lab, cp) == dict.fromkeys(COMPONENTS, f"v{NEW}"), f"{cp}'s components not done first"
    assert kube_proxy_version(lab) in (None, f"v{NEW}"), "the add-ons were not upgraded with the last control plane"
    modes = [(gate_proved(run.output, cp) or ("not printed",))[0] for cp in CONTROL_PLANES]
    assert modes == ["mixed", "mixed", "steady"], f"gates after each control plane's components: {modes}"
    assert package_version(lab, FIRST).startswith(NEW), f"{FIRST}'s packages were not upgraded yet"
    assert node_kubelet(lab, FIRST) == f"v{OLD}", f"{FIRST}'s kubelet restarted before the kill"
    node = lab.nodes()[FIRST]
    assert node["spec"].get("unschedulable") and CORDON_MARK in node["metadata"].get("annotations", {}), node
    for cp in (SECOND, THIRD):
        assert node_kubelet(lab, cp) == f"v{OLD}", f"{cp}'s kubelet went before {FIRST}'s"
        assert not lab.nodes()[cp]["spec"].get("unschedulable"), f"{cp} cordoned before its turn"
    done["g"] = True


def test_h_a_new_kubelet_that_refuses_to_start_is_replaced_by_the_previous_one(lab):
    """A gate the new kubelet no longer knows appears in the operator's /etc/default/kubelet after preflight (the old
    kubelet accepts it): the new kubelet exits, the node's etcd member and kube-apiserver were stopped for it. The
    failure path installs and starts the previous kubelet, waits until every static Pod runs, uncordons the node, and
    the run stops naming the kubelet's own error."""
    from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._component_gates_table import LOCKED, REMOVED

    after("g")
    new_minor, old_minor = int(NEW.split(".")[1]), int(OLD.split(".")[1])
    removed = REMOVED["kube-controller-manager"]
    gate = sorted(set(removed.get(new_minor, ())) - set(removed.get(old_minor, ())))[0]
    value = str(LOCKED["kube-controller-manager"].get(old_minor, {}).get(gate, True)).lower()
    defaults = lab.node_exec(SECOND, "cat", "/etc/default/kubelet")
    injected = {"at": None}

    def inject_when_cordoned():
        # SECOND's turn: it is cordoned for its kubelet step (after preflight, before its packages)
        if injected["at"] is None and lab.nodes()[SECOND]["spec"].get("unschedulable"):
            lab.node_exec(
                SECOND, "sh", "-c", f"echo 'KUBELET_EXTRA_ARGS=--feature-gates={gate}={value}' >/etc/default/kubelet"
            )
            injected["at"] = time.monotonic()
        return False

    try:
        run = lab.playbook(
            "upgrade", "-e", TARGET, "-e", "node_upgrade_ready_timeout=60", kill_state=inject_when_cordoned
        )
    finally:
        lab.node_exec(SECOND, "sh", "-c", f"printf '%s\\n' {shlex.quote(defaults.rstrip())} >/etc/default/kubelet")
    record("h: the new kubelet refuses to start", run, rerun_of="g", gate=gate)
    assert injected["at"], f"{SECOND} was never cordoned: " + run.tail()
    assert run.returncode != 0, run.tail()
    assert "did not come up" in run.output and "unrecognized feature gate" in run.output, run.tail()
    assert node_kubelet(lab, FIRST) == f"v{NEW}", "the first control plane's kubelet (killed in g) was not finished"
    # The second control plane runs the kubelet it ran before, with every static Pod, and is schedulable.
    assert node_kubelet(lab, SECOND) == f"v{OLD}" and package_version(lab, SECOND).startswith(OLD)
    node = lab.nodes()[SECOND]
    assert not node["spec"].get("unschedulable") and CORDON_MARK not in node["metadata"].get("annotations", {}), node
    for component in ("etcd", "kube-apiserver"):
        running = lab.node_exec(SECOND, "crictl", "ps", "--name", f"^{component}$", "--state", "running", "--quiet")
        assert running.strip(), f"{component} is not running on {SECOND}"
    health = lab.node_exec(
        FIRST,
        "sh",
        "-c",
        "crictl exec $(crictl ps --name '^etcd$' --state running --quiet | head -n1) etcdctl"
        " --endpoints=https://127.0.0.1:2379 --cacert=/etc/kubernetes/pki/etcd/ca.crt"
        " --cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt --key=/etc/kubernetes/pki/etcd/healthcheck-client.key"
        " endpoint health --cluster -w json",
    )
    members = json.loads(health)
    assert len(members) == 3 and all(m["health"] for m in members), members
    reports = sorted((lab.artifacts / "reports").glob("upgrade-*.json"))
    report = json.loads(reports[-1].read_text())
    assert report["status"] == "failed" and [f["host"] for f in report["failed"]] == [SECOND], report["failed"]
    assert "did not come up" in report["failed"][0]["msg"], report["failed"]
    print(f"\n(h) {gate}={value} in {SECOND}'s /etc/default/kubelet: {report['failed'][0]['msg']}")
    done["h"] = True


def test_e_a_budget_that_never_yields_stops_before_the_kubelet(lab):
    after("h")
    run = lab.playbook(
        "upgrade", "-e", TARGET, "-e", "node_upgrade_drain_timeout=20", "-e", "node_upgrade_drain_retry_delay=5"
    )
    record("e: PDB never yields", run, rerun_of="g")
    assert run.returncode != 0, "the run went through a drain that cannot finish: " + run.tail()
    assert "default/pinned" in run.output, "the failure does not name the blocking budget: " + run.tail()
    for cp in CONTROL_PLANES:  # the control planes, (b)'s and (g)'s included, were finished first
        assert node_kubelet(lab, cp) == f"v{NEW}", cp
        assert manifest_versions(lab, cp) == dict.fromkeys(COMPONENTS, f"v{NEW}"), cp
        node = lab.nodes()[cp]
        assert not node["spec"].get("unschedulable") and CORDON_MARK not in node["metadata"].get("annotations", {}), cp
    assert package_version(lab, BLOCKED).startswith(OLD), f"{BLOCKED}'s kubelet package was touched"
    node = lab.nodes()[BLOCKED]
    assert not node["spec"].get("unschedulable"), f"{BLOCKED} left cordoned although its kubelet was not touched"
    assert CORDON_MARK not in node["metadata"].get("annotations", {}), node["metadata"]
    # ansible-playbook ended the run at the failed worker's batch, before the report play: the failure path wrote it,
    # with every host and what happened to it.
    reports = sorted((lab.artifacts / "reports").glob("upgrade-*.json"))
    assert reports, f"the failed run wrote no report in {lab.artifacts / 'reports'}"
    report = json.loads(reports[-1].read_text())
    assert report["status"] == "failed", report["status"]
    assert [f["host"] for f in report["failed"]] == [BLOCKED], report["failed"]
    assert "Drain" in report["failed"][0]["step"] and "default/pinned" in report["failed"][0]["msg"], report["failed"]
    outcomes = {h["host"]: h["outcome"] for h in report["hosts"]}
    assert sorted(outcomes) == sorted(CONTROL_PLANES + WORKERS), outcomes
    assert (outcomes[BLOCKED], outcomes[OPERATORS]) == ("failed", "not reached"), outcomes
    assert all(outcomes[cp] in ("upgraded", "skipped") for cp in CONTROL_PLANES), outcomes
    assert "- status: failed" in reports[-1].with_suffix(".md").read_text()
    print(f"\n(e) report of the failed run: {reports[-1].name}: {json.dumps(report['failed'])}; hosts {outcomes}")
    lab.kubectl("patch", "pdb", "pinned", "--type", "merge", "-p", '{"spec": {"minAvailable": 0}}')
    done["e"] = True


def test_c_killed_after_the_packages_before_the_kubelet_restart(lab):
    after("e")
    # The control planes are done, so the first kubelet restart of this run is the first worker's.
    run = lab.playbook("upgrade", "-e", TARGET, kill_when=lambda line: "Node upgrade | Restart kubelet" in line)
    assert run.killed, "the run ended before a worker's kubelet restart: " + run.tail()
    record("c: killed before the kubelet restart", run, rerun_of="e")
    assert package_version(lab, BLOCKED).startswith(NEW), f"{BLOCKED}'s packages were not upgraded yet"
    assert node_kubelet(lab, BLOCKED) == f"v{OLD}", f"{BLOCKED}'s kubelet restarted before the kill"
    assert lab.nodes()[BLOCKED]["spec"].get("unschedulable"), f"{BLOCKED} is not cordoned mid-upgrade"
    done["c"] = True


def test_d_killed_while_a_slow_pod_drains(lab):
    after("c")

    def slow_pod_terminating():
        pods = lab.json("get", "pods", "-l", "app=slow-stop")["items"]
        terminating = [p for p in pods if p["metadata"].get("deletionTimestamp")]
        if terminating:
            slow["pod"] = terminating[0]
        return bool(terminating)

    slow: dict = {}
    run = lab.playbook("upgrade", "-e", TARGET, kill_state=slow_pod_terminating)
    assert run.killed, f"the run ended before {OPERATORS}'s drain: " + run.tail()
    # The rerun finished the first worker although its kubelet was only installed, not restarted.
    assert node_kubelet(lab, BLOCKED) == f"v{NEW}"
    assert not lab.nodes()[BLOCKED]["spec"].get("unschedulable"), f"{BLOCKED} left cordoned"
    grace = slow["pod"]["metadata"].get("deletionGracePeriodSeconds")
    record("d: killed while a slow Pod drains", run, rerun_of="c", grace_period_used=grace)
    assert grace == SLOW_GRACE_S, f"the drain did not give the Pod its own grace period: {grace}"
    done["d"] = True


def test_the_last_rerun_converges_and_nothing_was_lost(lab):
    after("d")
    run = lab.playbook("upgrade", "-e", TARGET)
    record("final rerun", run, rerun_of="d")
    assert run.returncode == 0, run.tail()
    nodes = lab.nodes()
    for name, node in nodes.items():
        assert node["status"]["nodeInfo"]["kubeletVersion"] == f"v{NEW}", name
        assert CORDON_MARK not in node["metadata"].get("annotations", {}), name
        # (f): only the operator's cordon is left
        assert bool(node["spec"].get("unschedulable")) == (name == OPERATORS), name
    for cp in CONTROL_PLANES:
        assert manifest_versions(lab, cp) == dict.fromkeys(COMPONENTS, f"v{NEW}"), cp
    assert cluster_version(lab) == f"v{NEW}"
    assert kube_proxy_version(lab) in (None, f"v{NEW}")
    coredns = lab.kubectl("-n", "kube-system", "get", "deployment", "coredns", "-o", "json", check=False)
    if coredns.returncode == 0:
        images = subprocess.run(
            [str(k8s_bin(NEW, "kubeadm")), "config", "images", "list", "--kubernetes-version", f"v{NEW}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        want = next(i for i in images if "/coredns" in i)
        have = json.loads(coredns.stdout)["spec"]["template"]["spec"]["containers"][0]["image"]
        assert _manifest.image_tag(have) == _manifest.image_tag(want), (have, want)
    assert lab.json("get", "configmap", "before-upgrade")["data"] == {"created": "before"}
    for deployment in ("steady", "pinned", "slow-stop"):
        lab.json("get", "deployment", deployment)
    samples = watch["ready"].stop()
    assert len(samples) > 100, f"too few samples to judge: {len(samples)}"
    assert min(samples) >= 2, f"ready replicas of steady fell below minAvailable=2: {samples}"
    # THIRD's kubelet restarted once (in (e)'s run): term-logger got SIGTERM and its time to stop, then started again.
    events = [line.split() for line in lab.node_exec(THIRD, "cat", TERM_LOG).splitlines() if line.strip()]
    stops = [(int(t), int(c)) for (k, t), (k2, c) in zip(events, events[1:]) if k == "term" and k2 == "clean"]
    print(f"\nterm-logger on {THIRD}: {events}")
    assert stops and all(c - t >= TERM_STOP_S for t, c in stops), f"term-logger was not given its grace: {events}"
    assert [event[0] for event in events].count("term") == len(stops), f"a stop of term-logger was cut short: {events}"
    assert events[-1][0] == "started", f"term-logger does not run again after the kubelet restart: {events}"
    lab.node_exec(THIRD, "rm", "-f", "/etc/kubernetes/manifests/term-logger.yaml")
    lab.kubectl("uncordon", OPERATORS)
    (lab.logs / "faults-story.json").write_text(json.dumps(story, indent=2))
    print("\nfault story:\n" + "\n".join(json.dumps(s) for s in story))

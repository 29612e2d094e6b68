"""The upgrade of a real kubeadm HA lab (3 control planes, 2 workers), one story in order.

Each step builds on the cluster the previous one left, as an operator's day would:
check-mode plan (through ansible-runner, as AWX runs it) -> workload with a PodDisruptionBudget ->
enable MVP (and rerun: nothing changes) -> a broken peer CA on one control plane stops the
upgrade at the gate after the first control plane -> repaired, the run is killed right after the
first control-plane kubelet restart (the default order: every control plane's components behind the
gates first, then the control-plane kubelets) -> the rerun converges -> data and the etcd snapshot -> verify.
A step whose predecessor failed fails too, saying so (the cluster is not in the state it needs).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import CONTROL_PLANES, NEW, OLD, REPO, WORKERS, ReadyWatcher, gate_proved, restored_keys
from health_sampler import Sampler, lab_control_planes, summarize

PEER_CA = "/etc/kubernetes/pki/ca.crt"
WRONG_PEER_CA = "/etc/kubernetes/pki/front-proxy-ca.crt"
MANIFEST = "/etc/kubernetes/manifests/kube-apiserver.yaml"
ETCD_MANIFEST = "/etc/kubernetes/manifests/etcd.yaml"
TARGET = f"skewsafe_kubernetes_version={NEW}"

WORKLOAD = """
apiVersion: v1
kind: Secret
metadata: {name: canary, namespace: default}
stringData: {value: skewsafe-secret-canary}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: steady, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: steady}}
  template:
    metadata: {labels: {app: steady}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: pause
        image: registry.k8s.io/pause:3.10.2
        imagePullPolicy: Never
        # a slow readiness probe: a replica evicted from one worker is Ready elsewhere only after 10 s
        # (`/pause -v` prints its version and exits 0)
        readinessProbe:
          exec: {command: [/pause, -v]}
          initialDelaySeconds: 10
          periodSeconds: 2
        # values no output of the run may carry (the final rerun runs with -vvv)
        env:
        - {name: LITERAL, value: skewsafe-literal-canary}
        - name: FROM_SECRET
          valueFrom: {secretKeyRef: {name: canary, key: value}}
---
# A node agent with scratch data (as CSI node plugins, log and CNI agents): a drain must leave its Pod alone.
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-agent, namespace: default}
spec:
  selector: {matchLabels: {app: node-agent}}
  template:
    metadata: {labels: {app: node-agent}}
    spec:
      terminationGracePeriodSeconds: 1
      tolerations: [{operator: Exists}]
      containers:
      - name: pause
        image: registry.k8s.io/pause:3.10.2
        imagePullPolicy: Never
        volumeMounts: [{name: scratch, mountPath: /scratch}]
      volumes: [{name: scratch, emptyDir: {}}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: steady, namespace: default}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: steady}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: before-upgrade, namespace: default}
data: {created: before}
"""

done: dict[str, bool] = {}


def after(step: str) -> None:
    if not done.get(step):
        pytest.fail(f"needs step '{step}' to have passed first (the cluster is not in the state this step starts from)")


watcher: dict[str, ReadyWatcher] = {}
health: dict[str, Sampler] = {}
# Longest "two control planes unhealthy at once" allowed: an etcd leader election after a member
# restart makes every kube-apiserver's /readyz fail for about a second; two restarting nodes last tens.
TWO_AT_ONCE_TOLERANCE_S = 3.0


def test_check_mode_through_ansible_runner_prints_the_plan_and_changes_nothing(lab, runner_job):
    before = lab.snapshot_state()
    config_rv = lab.json("-n", "kube-system", "get", "configmap", "kubeadm-config")["metadata"]["resourceVersion"]
    credentials = Path.home() / ".cache" / "skewsafe.kubeadm" / "credentials"
    shutil.rmtree(credentials, ignore_errors=True)
    job = runner_job("upgrade.yml", extravars={"skewsafe_kubernetes_version": NEW}, cmdline="--check")
    assert job.status == "successful", job.stdout_tail()
    # the run's minted one-hour credential is gone once ansible-playbook has ended; no key in any job event
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and credentials.exists() and any(credentials.iterdir()):
        time.sleep(0.5)
    assert credentials.exists(), "check mode minted no credential (it needs one to read the cluster)"
    assert not list(credentials.iterdir()), list(credentials.iterdir())
    assert not [f.name for f in job.event_files() if "PRIVATE KEY" in f.read_text()], "a key in the job events"
    plan_lines = [m for m in job.messages() if f"-> {NEW}" in m]
    for node in CONTROL_PLANES + WORKERS:
        assert any(line.startswith(f"{node} ") and f"{OLD} -> {NEW}" in line for line in plan_lines), (node, plan_lines)
    # The order of the run: every control plane's components (the first one's by upgrade apply), then the
    # control-plane kubelets, then the workers.
    order = [m.split(": ")[1:3] for m in job.messages() if m.startswith("step ")]
    assert order == (
        [[cp, "control-plane components"] for cp in CONTROL_PLANES]
        + [[cp, "control-plane kubelet"] for cp in CONTROL_PLANES]
        + [[w, "worker"] for w in WORKERS]
    ), order
    assert job.event_files(), "ansible-runner wrote no job events"
    assert not [e for e in job.events if e["event"] == "playbook_on_vars_prompt"]
    assert lab.snapshot_state() == before
    after_rv = lab.json("-n", "kube-system", "get", "configmap", "kubeadm-config")["metadata"]["resourceVersion"]
    assert after_rv == config_rv, "check mode wrote kubeadm-config"
    done["check"] = True


def test_workload_with_a_disruption_budget_is_running(lab, tmp_path):
    manifest = tmp_path / "workload.yaml"
    manifest.write_text(WORKLOAD)
    lab.kubectl("apply", "-f", str(manifest))
    lab.kubectl("rollout", "status", "deployment/steady", "--timeout=180s")
    lab.kubectl("rollout", "status", "daemonset/node-agent", "--timeout=180s")
    agents.update(_agent_pods(lab))
    assert sorted(agents) == sorted(CONTROL_PLANES + WORKERS), agents
    watcher["ready"] = ReadyWatcher(lab).start()
    done["workload"] = True


agents: dict[str, str] = {}


def _agent_pods(lab) -> dict[str, str]:
    """node -> uid of the node-agent DaemonSet's Pod there."""
    pods = lab.json("get", "pods", "-l", "app=node-agent")["items"]
    return {p["spec"]["nodeName"]: p["metadata"]["uid"] for p in pods}


KEYRING = "/etc/apt/keyrings/kubernetes-apt-keyring.gpg"
UPSTREAM_KEY = "DE15B14486CD377B9E876E1A234654DA9A296436"
PACKAGES_PLAY = """
- name: The packages role alone
  hosts: {host}
  gather_facts: true
  gather_subset: [min]
  roles:
    - role: skewsafe.kubeadm.packages
      vars:
        packages_names: [kubectl]
        packages_version: "{version}"
        packages_repo_base_url: "{{{{ skewsafe_package_repo_base_url }}}}"
"""


def _key_fingerprints(lab, node: str) -> list[str]:
    listing = lab.node_exec(node, "gpg", "--batch", "--show-keys", "--with-colons", KEYRING)
    return [line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:")][:1]


def test_nodes_are_reached_as_a_non_root_user_with_become(lab):
    """The story below runs as operators run it: SSH as a user with sudo, every node task through become."""
    inventory = lab.inventory.read_text()
    assert "ansible_user=root" not in inventory and "ansible_become=true" in inventory, inventory

    def ids(*extra):
        out = subprocess.run(
            ["ansible", "-i", str(lab.inventory), WORKERS[0], "-m", "ansible.builtin.command", "-a", "id -un", *extra],
            capture_output=True,
            text=True,
            check=False,
            env=dict(os.environ, ANSIBLE_NOCOLOR="1"),
        )
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout.strip().splitlines()[-1]

    assert ids() == "root"
    assert ids("-e", "ansible_become=false") not in ("root", "")


def test_signed_repository_key_is_checked_by_fingerprint(lab, tmp_path):
    """The lab repository is signed with its own key: a key that is not the expected one is refused before
    anything changes, and a keyring holding another key is replaced by the checked one."""
    node = WORKERS[1]
    play = tmp_path / "packages.yml"
    play.write_text(PACKAGES_PLAY.format(host=node, version=OLD))
    lab_key = _key_fingerprints(lab, node)
    assert lab_key and lab_key[0] != UPSTREAM_KEY, "the lab node has no keyring of the lab's own key"
    sources = lab.node_exec(node, "cat", "/etc/apt/sources.list.d/kubernetes.list")
    assert f"signed-by={KEYRING}" in sources, sources

    refused = lab.playbook(str(play), "-e", f"skewsafe_package_repo_key_fingerprint={UPSTREAM_KEY}")
    assert refused.returncode != 0, refused.tail()
    assert f"not the expected {UPSTREAM_KEY}" in refused.output and "Nothing was changed" in refused.output
    assert _key_fingerprints(lab, node) == lab_key
    assert lab.node_exec(node, "cat", "/etc/apt/sources.list.d/kubernetes.list") == sources

    # Another key in the keyring (a rotated or tampered key): fetched again, checked, replaced.
    # made here (the node has gpg but no gpg-agent, which making a key needs), written into the node's keyring
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    gpg = ["gpg", "--batch", "--homedir", str(home)]
    try:
        subprocess.run(
            [*gpg, "--passphrase", "", "--quick-gen-key", "other <other@skewsafe.invalid>", "ed25519", "sign", "1d"],
            check=True,
            capture_output=True,
        )
    finally:
        if shutil.which("gpgconf"):  # the agent that making the key started is not left running
            subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"], check=False)
    other = base64.b64encode(subprocess.run([*gpg, "--export"], check=True, capture_output=True).stdout).decode()
    lab.node_exec(node, "sh", "-c", f"echo {other} | base64 -d >{KEYRING}")
    assert _key_fingerprints(lab, node) != lab_key
    replaced = lab.playbook(str(play))
    assert replaced.returncode == 0, replaced.tail()
    assert _key_fingerprints(lab, node) == lab_key
    again = lab.playbook(str(play))
    assert again.returncode == 0 and again.recap()[node]["changed"] == 0, again.tail()


def test_preflight_names_a_kubelet_gate_the_target_refuses_with_the_node_and_file(lab):
    """A node's own KubeletConfiguration carries a gate the target's kubelet no longer knows (from the table measured
    on the real binaries), a Pod without a controller runs on the other worker, and one control plane's etcd manifest
    has a flag kubeadm-config does not carry: preflight stops before any change and names the node and the file, the
    Pod that would stop that node's drain, and the etcd flag the upgrade's re-render would drop; it says what it
    compared on each node (kubeadm's renderings of the three components, etcd and the kubelet configuration). The
    kubelet is not restarted meanwhile; the files are put back (etcd restarts with its own manifest and must be
    healthy again) and the Pod deleted."""
    from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._component_gates_table import REMOVED

    new_minor, old_minor = int(NEW.split(".")[1]), int(OLD.split(".")[1])
    removed = REMOVED["kube-controller-manager"]
    gate = sorted(set(removed.get(new_minor, ())) - set(removed.get(old_minor, ())))[0]
    node, config = WORKERS[0], "/var/lib/kubelet/config.yaml"
    etcd_node, etcd_flag = CONTROL_PLANES[1], "--quota-backend-bytes=4294967296"
    lab.node_exec(node, "cp", "-p", config, "/root/kubelet-config.yaml.e2e")
    lab.node_exec(etcd_node, "cp", "-p", ETCD_MANIFEST, "/root/etcd.yaml.e2e")  # not in the manifests directory
    lab.kubectl(
        "run",
        "debug",
        "--image=registry.k8s.io/pause:3.10.2",
        "--image-pull-policy=Never",
        f"--overrides={json.dumps({'spec': {'nodeName': WORKERS[1]}})}",
    )
    try:
        lab.node_exec(node, "sh", "-c", f"printf 'featureGates:\\n  {gate}: true\\n' >>{config}")
        lab.node_exec(etcd_node, "sed", "-i", f"s|^    - --snapshot-count=10000$|&\\n    - {etcd_flag}|", ETCD_MANIFEST)
        assert etcd_flag in lab.node_exec(etcd_node, "cat", ETCD_MANIFEST)
        run = lab.playbook("preflight", "-e", TARGET)
        assert run.returncode != 0, run.tail()
        expected = f"node {node}: {config}: feature-gates {gate}: kubelet 1.{new_minor} no longer knows this gate"
        assert expected in run.output, run.tail()
        assert "kubeadm upgrade node rewrites this file from them" in run.output, run.tail()
        bare = f"node {WORKERS[1]}: its drain would stop at default/debug (no controller: nothing would recreate it)"
        assert bare in run.output, run.tail()
        assert f"node {etcd_node}: the live control-plane manifests differ" in run.output, run.tail()
        assert f"drop or change: etcd: flag {etcd_flag}." in run.output, run.tail()
        for cp in (CONTROL_PLANES[0], CONTROL_PLANES[2]):
            compared = f"{cp}: compared kube-apiserver, kube-controller-manager, kube-scheduler, etcd, {config}"
            assert compared in run.output, run.tail()
            assert f"{cp}: the live control-plane manifests differ" not in run.output, run.tail()
        print(
            f"\npreflight with {gate} in {node}'s {config}, a bare Pod on {WORKERS[1]} and {etcd_flag} in"
            f" {etcd_node}'s etcd manifest: stopped in {run.seconds:.0f}s naming the node and file, the Pod and the flag"
        )
    finally:
        lab.node_exec(node, "cp", "-p", "/root/kubelet-config.yaml.e2e", config)
        # before etcd restarts again: a delete that meets sslab-cp2's kube-apiserver without its etcd fails, and a bare
        # Pod left behind stops every later preflight (rehearsal 2026-12-07)
        lab.wait_for(lambda: bare_pod_gone(lab, "debug"), 180, "the bare Pod default/debug deleted")
        lab.node_exec(etcd_node, "cp", "-p", "/root/etcd.yaml.e2e", ETCD_MANIFEST)
        lab.wait_for(
            lambda: etcd_serves_its_manifest(lab, etcd_node, etcd_flag),
            240,
            f"{etcd_node}'s etcd running its own manifest again and healthy",
        )


def bare_pod_gone(lab, name):
    """Delete the Pod (again, if an earlier try failed) and say whether the API server no longer has it."""
    lab.kubectl("delete", "pod", name, "--grace-period=0", "--force", "--wait=true", "--ignore-not-found", check=False)
    found = lab.kubectl("get", "pod", name, "--ignore-not-found", "-o", "name", check=False)
    return found.returncode == 0 and not found.stdout.strip()


def etcd_serves_its_manifest(lab, node, gone_flag):
    """The node's etcd process runs without ``gone_flag`` and its member answers healthy through its own client."""
    pki = "/etc/kubernetes/pki/etcd"
    pattern = f"[{gone_flag[0]}]{gone_flag[1:]}"  # a bracket so that this shell's own command line does not match
    script = (
        f"! pgrep -f -- '{pattern}' >/dev/null && pgrep -x etcd >/dev/null"
        " && cid=$(crictl ps --name '^etcd$' --state running -q | head -n 1) && [ -n \"$cid\" ]"
        f' && crictl exec "$cid" etcdctl --endpoints=https://127.0.0.1:2379 --cacert={pki}/ca.crt'
        f" --cert={pki}/healthcheck-client.crt --key={pki}/healthcheck-client.key endpoint health"
    )
    return "is healthy" in lab.node_exec(node, "sh", "-c", script, check=False)


def test_mvp_enable_turns_it_on_and_a_rerun_changes_nothing(lab):
    # Health of every control plane, once a second, from here to the end of the upgrade.
    health["sampler"] = Sampler(lab_control_planes(), pki_from=CONTROL_PLANES[0]).start()
    run = lab.playbook("mvp_enable")
    assert run.returncode == 0, run.tail()
    etcd_pods = lab.json("-n", "kube-system", "get", "pods", "-l", "component=etcd")["items"]
    members = sorted(
        p["metadata"]["annotations"]["kubeadm.kubernetes.io/etcd.advertise-client-urls"] for p in etcd_pods
    )
    assert len(members) == len(CONTROL_PLANES), members
    for node in CONTROL_PLANES:
        manifest = lab.node_exec(node, "cat", MANIFEST)
        assert f"--peer-ca-file={PEER_CA}" in manifest, node
        # graceful restarts ride the same re-render (mvp_enable_apiserver_shutdown_args)
        assert "--shutdown-delay-duration=5s" in manifest, node
        assert "--shutdown-watch-termination-grace-period=5s" in manifest, node
        # and every etcd member, the local one first (mvp_enable_etcd_all_members)
        assert f"--etcd-servers={','.join(['https://127.0.0.1:2379', *members])}" in manifest, node
    config = lab.json("-n", "kube-system", "get", "configmap", "kubeadm-config")["data"]["ClusterConfiguration"]
    assert "peer-ca-file" in config and "shutdown-delay-duration" in config and "etcd-servers" in config
    assert list((lab.artifacts / "backups").glob("kubeadm-config-*.yaml")), "no backup of the ClusterConfiguration"

    before = lab.snapshot_state()
    rerun = lab.playbook("mvp_enable")
    assert rerun.returncode == 0, rerun.tail()
    recap = rerun.recap()
    assert set(CONTROL_PLANES) <= set(recap), rerun.tail()
    assert all(recap[n]["changed"] == 0 for n in CONTROL_PLANES), recap
    assert lab.snapshot_state() == before
    done["mvp"] = True


def test_gate_holds_when_a_control_plane_has_the_wrong_peer_ca(lab):
    after("mvp")
    broken = CONTROL_PLANES[2]
    lab.node_exec(broken, "cp", MANIFEST, "/root/kube-apiserver.yaml.e2e")
    lab.node_exec(broken, "sed", "-i", f"s#--peer-ca-file={PEER_CA}#--peer-ca-file={WRONG_PEER_CA}#", MANIFEST)
    lab.wait_for(
        lab.apiserver_runs_with(broken, f"--peer-ca-file={WRONG_PEER_CA}"),
        240,
        f"kube-apiserver on {broken} with the wrong CA",
    )
    time.sleep(10)  # let its peer discovery sync fail at least once
    untouched = CONTROL_PLANES[1:] + WORKERS
    before = lab.snapshot_state()

    # A hand edit is drift as well (a re-render would undo it); accepted here, so that the gate is what stops.
    run = lab.playbook("upgrade", "-e", TARGET, "-e", "skewsafe_accept_manifest_drift=true")
    assert f"flag --peer-ca-file: {WRONG_PEER_CA} -> {PEER_CA}" in run.output, run.tail()
    assert run.returncode != 0, run.tail()
    # The exact diagnosis: the broken server, the cause, what to do.
    diagnosis = f"{broken}: peer TLS fails"
    assert diagnosis in run.output and "--peer-ca-file must hold the CA" in run.output, run.tail()
    # It is caught either while MVP is checked at the running version (its peer discovery calls
    # fail: 503s rising) or at the gate after the first control plane (nothing merged) - never later.
    first = CONTROL_PLANES[0]
    assert "Gate | prove the Mixed Version Proxy before anything else moves (sslab-cp2)" not in run.output
    state = lab.snapshot_state()
    assert {n: state[n] for n in untouched} == {n: before[n] for n in untouched}, "a node after the gate was touched"
    assert lab.kubelet_version(first) == f"v{OLD}", "the first control plane was drained/upgraded past the gate"
    if f"Gate | prove the Mixed Version Proxy before anything else moves ({first})" in run.output:
        assert lab.apiserver_image_tag(first) == f"v{NEW}"
    else:
        assert state[first] == before[first], f"{first} changed although the run stopped before the upgrade"
    assert not any(s[2] for s in state.values()), f"a node was left cordoned: {state}"
    # Stopped in mvp_enable or at the gate, either way the run's report says so, with every host.
    report = latest_report(lab)
    assert report["status"] == "failed" and len(report["failed"]) == 1, report
    assert "peer TLS fails" in report["failed"][0]["msg"], report["failed"]
    assert sorted(h["host"] for h in report["hosts"]) == sorted(CONTROL_PLANES + WORKERS), report["hosts"]
    print(f"\nreport of the stopped run: failed at {report['failed'][0]['host']}: {report['failed'][0]['step']}")

    lab.node_exec(broken, "cp", "/root/kube-apiserver.yaml.e2e", MANIFEST)
    lab.wait_for(
        lab.apiserver_runs_with(broken, f"--peer-ca-file={PEER_CA}"), 240, f"kube-apiserver on {broken} repaired"
    )
    done["gate"] = True


CORDON_MARK = "skewsafe.kubeadm/cordoned"


def ran_on(output: str, task: str) -> list[str]:
    """The hosts a task ran on (ok or changed) in a default-callback log."""
    hosts = []
    for block in output.split("\nTASK [")[1:]:
        header, _newline, body = block.partition("\n")
        if task in header:
            hosts += [
                line.split("[", 1)[1].split("]", 1)[0].split(" -> ")[0]
                for line in body.splitlines()
                if line.startswith(("ok: [", "changed: ["))
            ]
    return hosts


MVP_PROVED = "MVP is proved on the running version."
# The lab's haproxy told before and after each control plane's restarts (control_plane_upgrade_take_out_tasks).
BALANCER = json.dumps(
    {
        "skewsafe_balancer_take_out_tasks": str(REPO / "lab" / "files" / "balancer-take-out.yml"),
        "skewsafe_balancer_put_back_tasks": str(REPO / "lab" / "files" / "balancer-put-back.yml"),
    }
)
TAKE_OUT = "Balancer | Lab haproxy, maintenance then sessions killed for"


def balancer_states(lab) -> dict[str, str]:
    """{server: status} of the lab haproxy's kube-apiservers backend, from its stats CSV."""
    url = next(
        line.split("=", 1)[1]
        for line in lab.inventory.read_text().splitlines()
        if line.startswith("lab_haproxy_stats_url=")
    )
    with urllib.request.urlopen(f"{url};csv", timeout=10) as response:
        rows = response.read().decode().splitlines()
    return {f[1]: f[17] for f in (row.split(",") for row in rows) if f[0] == "kube-apiservers" and f[1] != "BACKEND"}


def assert_mvp_enable_gated_unless_proved(run) -> None:
    """mvp_enable dials and gates the control planes again only when the run's preflight did not prove MVP."""
    assert ran_on(run.output, "Preflight | Check the Mixed Version Proxy on the running version") == [CONTROL_PLANES[0]]
    gated = ran_on(run.output, "Enable MVP | Prove MVP on the API servers done so far")
    if MVP_PROVED in run.output:
        assert gated == [], run.tail()
    else:
        assert gated, run.tail()
    # the ClusterConfiguration is still checked (and patched where it lacks a flag), once per running version: once
    # when proved (the play ends after the first control plane), at most twice on a rerun of a mixed control plane
    patched = ran_on(run.output, "Enable MVP | Patch the ClusterConfiguration")
    assert patched[:1] == [CONTROL_PLANES[0]], run.tail()
    assert (len(patched) == 1) if MVP_PROVED in run.output else (len(patched) <= 2), run.tail()


def test_rerun_resumes_and_a_killed_run_converges(lab):
    after("gate")
    first, second, operators = CONTROL_PLANES[0], CONTROL_PLANES[1], CONTROL_PLANES[2]
    # A node the operator cordoned before the run: upgraded, but left cordoned (a control plane, because
    # with only two workers a cordoned worker leaves the PDB-protected pods nowhere to go).
    lab.kubectl("cordon", operators)
    # Killed right after the first control-plane kubelet restart (the first control plane's, once every control
    # plane's components run the target): its static Pods are restarting, and the node is still cordoned (the
    # rerun must wait them out in preflight and uncordon it).
    marker = f"Control plane | Wait until whole again after the kubelet restart on {first}"
    killed = lab.playbook("upgrade", "-e", TARGET, "-e", BALANCER, kill_when=lambda line: marker in line)
    assert killed.killed, f"the run ended before {first}'s kubelet restart: " + killed.tail()
    # Taken out of the balancer before its kubelet step and, killed, left out; the others were put back.
    assert balancer_states(lab) == {first: "MAINT", second: "UP", operators: "UP"}, balancer_states(lab)
    # MVP was on already, but the gate test above may leave the first control plane upgraded: preflight proves
    # MVP only on a steady control plane, and enabling it again gates each host exactly when it did not.
    assert_mvp_enable_gated_unless_proved(killed)
    assert lab.kubelet_version(first) == f"v{NEW}"
    node = lab.nodes()[first]
    assert node["spec"].get("unschedulable") and CORDON_MARK in node["metadata"].get("annotations", {}), node
    # Components first: every kube-apiserver at the target before the first kubelet, no other kubelet touched.
    for name in CONTROL_PLANES[1:]:
        assert lab.apiserver_image_tag(name) == f"v{NEW}", (
            f"{name}'s components were not upgraded before {first}'s kubelet"
        )
        assert lab.kubelet_version(name) == f"v{OLD}", f"{name}'s kubelet went before {first}'s"
    # Proxying proved while mixed, after each control plane's components but the last: every old server answered
    # 404 locally and 200 through a peer for what only the new ones serve; steady after the last.
    gates = {cp: gate_proved(killed.output, cp) for cp in CONTROL_PLANES}
    assert gates[first] and gates[first][0] == "mixed" and gates[first][1] == set(CONTROL_PLANES[1:]), gates
    assert gates[second] and gates[second][0] == "mixed" and gates[second][1] == {operators}, gates
    assert all(g[2] == g[3] > 0 for g in (gates[first], gates[second])), gates
    assert gates[operators] and gates[operators][0] == "steady", gates
    assert killed.output.index(f"(steady mode) after {operators}") < killed.output.index(f"Drain {first}"), (
        "a control-plane drain started before every control plane's components passed the gate"
    )

    # -vvv: every task's arguments and results; the drains evict Pods whose environment holds the canaries
    run = lab.playbook("upgrade", "-e", TARGET, "-e", BALANCER, "-vvv")
    print(f"\nfinal upgrade run {OLD} -> {NEW}: {run.seconds:.0f}s (killed run {killed.seconds:.0f}s)")
    assert run.returncode == 0, run.tail()
    for canary in ("skewsafe-literal-canary", "skewsafe-secret-canary"):
        assert canary not in run.output, f"{canary} is in the -vvv output of the run"
        assert canary not in killed.output, f"{canary} is in the output of the killed run"
    # Only the kubelets left were restarted, each out of the balancer; every server is back, the first one too.
    assert sorted(set(ran_on(run.output, TAKE_OUT))) == sorted(CONTROL_PLANES[1:]), run.tail()
    assert balancer_states(lab) == dict.fromkeys(CONTROL_PLANES, "UP"), balancer_states(lab)
    # Every kube-apiserver ran the target with MVP: preflight proved it, and the enablement gated no host again.
    assert MVP_PROVED in run.output, run.tail()
    assert_mvp_enable_gated_unless_proved(run)
    nodes = lab.nodes()
    assert sorted(nodes) == sorted(CONTROL_PLANES + WORKERS)
    for name, node in nodes.items():
        assert node["status"]["nodeInfo"]["kubeletVersion"] == f"v{NEW}", name
        assert CORDON_MARK not in node["metadata"].get("annotations", {}), name
        if name == operators:
            assert node["spec"].get("unschedulable"), f"{name}: the operator's cordon was lifted"
        else:
            assert not node["spec"].get("unschedulable"), f"{name} left cordoned"
        ready = [c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready == ["True"], name
    for name in CONTROL_PLANES:
        assert lab.apiserver_image_tag(name) == f"v{NEW}", name

    report = latest_report(lab)
    by_node = {n["node"]: n for n in report["nodes"]}
    assert by_node[first]["action"] == "skipped (already at target)", by_node[first]
    assert by_node[second]["action"] == "upgraded"
    # Between the phases: components at the target, kubelet not. The rerun checked the components (the gate,
    # steady now) and upgraded the kubelets, the control planes' before the workers'.
    assert by_node[second]["mvp"]["mode"] == "steady", by_node[second]
    steps = [(s["node"], s["step"], s["action"]) for s in report["order"]]
    assert [s for s in steps if s[1] == "control-plane components"] == [
        (cp, "control-plane components", "checked, already at target") for cp in CONTROL_PLANES
    ], steps
    upgraded = [(s[0], s[1]) for s in steps if s[2] != "checked, already at target"]
    assert upgraded == [(cp, "control-plane kubelet") for cp in CONTROL_PLANES[1:]] + [
        (w, "worker") for w in WORKERS
    ], steps
    assert report["etcd_backup"]["sha256"]
    assert report["kept_cordoned"] == [operators], report["kept_cordoned"]
    # Every drain left the DaemonSet's Pods alone, emptyDir and all (k8s_drain evicted them): the same Pods as before.
    assert _agent_pods(lab) == agents, "a drain evicted a DaemonSet's Pod"
    # After each worker's uncordon, the run waited until what its drain evicted was whole again (the steady
    # Deployment's ReplicaSet, and its budget allowing a disruption) before it drained the next.
    for w in WORKERS:
        drained = by_node[w]["drain"]
        assert any(p.startswith("default/steady-") for p in drained["evicted"]), (w, drained)
        assert "PodDisruptionBudget/default/steady" in drained["waited_for"], (w, drained)
        assert any(k.startswith("ReplicaSet/default/steady-") for k in drained["waited_for"]), (w, drained)
        assert not any(p.startswith("default/node-agent-") for p in drained["evicted"]), (w, drained)
        print(
            f"\n{w}: evicted {len(drained['evicted'])} Pod(s), waited {drained['settle_seconds']} s for"
            f" {', '.join(drained['waited_for'])}"
        )
    lab.kubectl("uncordon", operators)
    markdown = sorted((lab.artifacts / "reports").glob("upgrade-*.md"))[-1].read_text()
    assert second in markdown and "## Order of the run" in markdown
    done["upgrade"] = True


def test_no_two_control_planes_were_down_at_once(lab):
    """From mvp_enable to the end of the upgrade: each control plane whole again before the next moved."""
    after("mvp")
    samples = health["sampler"].stop()
    after("upgrade")
    with open(lab.logs / "health-samples.jsonl", "w") as out:
        out.writelines(json.dumps(s) + "\n" for s in samples)
    summary = summarize(samples)
    print(f"\ncontrol-plane health samples: {json.dumps(summary)}")
    assert summary["samples"] > 300, summary
    assert summary["quorum_lost_samples"] == 0, summary
    # a member that timed out beside one stopped: one slow sample on a loaded machine, never a long run
    assert summary["longest_quorum_unknown_s"] <= TWO_AT_ONCE_TOLERANCE_S, summary
    assert summary["longest_two_unhealthy_s"] <= TWO_AT_ONCE_TOLERANCE_S, summary
    # with a member that did not answer in time counted as down: a slow sample lengthens a run, never to a restart's
    assert summary["longest_two_unhealthy_or_unknown_s"] <= 2 * TWO_AT_ONCE_TOLERANCE_S, summary
    # samples in which the loaded machine answered nothing at all: few, and none long enough to hide an outage
    assert summary["unanswered_samples"] <= max(5, summary["samples"] // 100), summary
    assert summary["longest_unanswered_s"] <= TWO_AT_ONCE_TOLERANCE_S, summary


def test_addons_run_what_kubeadm_chose_and_dns_resolves(lab, tmp_path):
    """kubeadm upgrades CoreDNS and kube-proxy with the last control plane; the lab runs CoreDNS as clusters do."""
    after("upgrade")
    lab.assert_addons_at(NEW, tmp_path)


def latest_report(lab) -> dict:
    reports = sorted((lab.artifacts / "reports").glob("upgrade-*.json"))
    assert reports, f"no report in {lab.artifacts / 'reports'}"
    return json.loads(reports[-1].read_text())


def test_workload_kept_its_disruption_budget(lab):
    after("workload")
    samples = watcher["ready"].stop()
    after("upgrade")
    assert len(samples) > 100, f"too few samples to judge: {len(samples)}"
    assert min(samples) >= 2, f"ready replicas fell below minAvailable=2: {samples}"
    lab.kubectl("rollout", "status", "deployment/steady", "--timeout=120s")


def test_data_survives_and_the_snapshot_restores(lab, tmp_path):
    after("upgrade")
    assert lab.json("get", "configmap", "before-upgrade")["data"] == {"created": "before"}
    backup = latest_report(lab)["etcd_backup"]
    snapshot = backup["path"]
    digest = subprocess.run(["sha256sum", snapshot], capture_output=True, text=True, check=True).stdout.split()[0]
    assert digest == backup["sha256"]
    # The node keeps its own copy in a dedicated directory, off etcd's data disk, and nothing half-written.
    node_copy = backup["node_path"]
    assert node_copy.startswith("/var/lib/skewsafe/etcd-snapshots/"), backup
    on_node = lab.node_exec(CONTROL_PLANES[0], "sha256sum", node_copy).split()[0]
    assert on_node == backup["sha256"]
    assert (
        lab.node_exec(
            CONTROL_PLANES[0], "find", "/var/lib/etcd", "-maxdepth", "1", "-name", "skewsafe-snapshot*"
        ).strip()
        == ""
    )

    keys = restored_keys(snapshot, tmp_path / "restored")
    assert "/registry/configmaps/default/before-upgrade" in keys
    assert len(keys) > 100, keys[-50:]


def _service_account_credential(lab, tmp_path) -> dict:
    """K8S_AUTH_* for a ServiceAccount token, as AWX's Kubernetes credential injects them."""
    lab.kubectl("-n", "kube-system", "create", "serviceaccount", "skewsafe-e2e")
    lab.kubectl(
        "create",
        "clusterrolebinding",
        "skewsafe-e2e",
        "--clusterrole=cluster-admin",
        "--serviceaccount=kube-system:skewsafe-e2e",
    )
    token = lab.kubectl("-n", "kube-system", "create", "token", "skewsafe-e2e", "--duration=1h").stdout.strip()
    config = lab.json("config", "view", "--raw")
    cluster = config["clusters"][0]["cluster"]
    ca = tmp_path / "ca.crt"
    ca.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    return {"K8S_AUTH_HOST": cluster["server"], "K8S_AUTH_API_KEY": token, "K8S_AUTH_SSL_CA_CERT": str(ca)}


def test_verify_through_ansible_runner_with_a_service_account_token(lab, runner_job, tmp_path):
    after("upgrade")
    credentials = Path.home() / ".cache" / "skewsafe.kubeadm" / "credentials"
    shutil.rmtree(credentials, ignore_errors=True)
    job = runner_job("verify.yml", envvars=_service_account_credential(lab, tmp_path))
    assert job.status == "successful", job.stdout_tail()
    results = [
        e["event_data"]["res"]
        for e in job.events
        if e["event"] == "runner_on_ok" and "Prove MVP" in e["event_data"].get("task", "")
    ]
    assert results and results[0]["passed"] and results[0]["mode"] == "steady", results
    nodes = " ".join(m for m in job.messages() if "sslab" in m)
    for node in CONTROL_PLANES + WORKERS:
        assert f"{node} v{NEW}" in nodes, nodes
    # the token was the credential: no cluster-admin certificate copied to the controller
    assert not credentials.exists() or not list(credentials.iterdir()), list(credentials.iterdir())
    assert not list(lab.artifacts.rglob("admin.conf")), "admin.conf left in the artifacts"

"""Each half-done state a killed run can leave, and the step the rerun takes."""

from __future__ import annotations

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._resume import ResumeError, left_to_do

OLD, NEW = "v1.36.5", "v1.37.2"


def manifests(apiserver=NEW, cm=NEW, scheduler=NEW):
    return {"kube-apiserver": apiserver, "kube-controller-manager": cm, "kube-scheduler": scheduler}


def first(**kw):
    observed = {"target": "1.37.2", "role": "first_control_plane", "kubelet": OLD, "manifests": manifests()}
    observed.update(cluster_version=NEW, kube_proxy=NEW, apiservers=[NEW, NEW, NEW])
    observed.update(kw)
    return left_to_do(observed)


@pytest.mark.parametrize(
    ("state", "observed", "next_step", "behind"),
    [
        (
            "nothing done yet",
            {
                "manifests": manifests(OLD, OLD, OLD),
                "cluster_version": OLD,
                "kube_proxy": OLD,
                "apiservers": [OLD, OLD, OLD],
            },
            "kubeadm upgrade apply",
            [
                "kube-apiserver manifest at v1.36.5",
                "kube-controller-manager manifest at v1.36.5",
                "kube-scheduler manifest at v1.36.5",
                "kubeadm-config kubernetesVersion at v1.36.5",
                "kubelet at v1.36.5",
            ],
        ),
        (
            "apply killed after the kube-apiserver manifest",
            {"manifests": manifests(NEW, OLD, OLD), "cluster_version": OLD, "apiservers": [NEW, OLD, OLD]},
            "kubeadm upgrade apply",
            [
                "kube-controller-manager manifest at v1.36.5",
                "kube-scheduler manifest at v1.36.5",
                "kubeadm-config kubernetesVersion at v1.36.5",
                "kubelet at v1.36.5",
            ],
        ),
        # kubeadm leaves the add-ons to the last control plane: an old kube-proxy is right while others are old
        (
            "apply done, other control planes old",
            {"kube_proxy": OLD, "apiservers": [NEW, OLD, OLD]},
            "kubelet",
            ["kubelet at v1.36.5"],
        ),
        (
            "every control plane upgraded, the add-ons killed",
            {"kube_proxy": OLD, "kubelet": NEW},
            "kubeadm upgrade apply",
            ["kube-proxy DaemonSet at v1.36.5"],
        ),
        ("apply finished, kubelet not yet", {}, "kubelet", ["kubelet at v1.36.5"]),
        (
            "a manifest removed by hand",
            {"manifests": manifests(scheduler=None)},
            "kubeadm upgrade apply",
            ["kube-scheduler manifest missing", "kubelet at v1.36.5"],
        ),
        ("no kube-proxy in the cluster", {"kube_proxy": None}, "kubelet", ["kubelet at v1.36.5"]),
        ("all done", {"kubelet": NEW}, "none", []),
    ],
)
def test_first_control_plane(state, observed, next_step, behind):
    result = first(**observed)
    assert (result["next_step"], result["behind"]) == (next_step, behind), state
    assert result["any"] == (next_step != "none")


@pytest.mark.parametrize(
    ("state", "apiserver", "kubelet", "next_step"),
    [
        ("upgrade node not run or killed", OLD, OLD, "kubeadm upgrade node"),
        ("killed between kubeadm upgrade node and the kubelet", NEW, OLD, "kubelet"),
        ("packages installed, kubelet not restarted: the Node still says old", NEW, OLD, "kubelet"),
        ("done", NEW, NEW, "none"),
    ],
)
def test_other_control_plane(state, apiserver, kubelet, next_step):
    observed = {
        "target": "v1.37.2",
        "role": "control_plane",
        "kubelet": kubelet,
        "manifests": manifests(apiserver=apiserver),
        "apiservers": [NEW, apiserver, OLD],
        "kube_proxy": OLD,
    }
    result = left_to_do(observed)
    assert result["next_step"] == next_step, state
    # kubeadm-config belongs to the first control plane; kube-proxy waits for the last one
    assert not any("kubeadm-config" in b or "kube-proxy" in b for b in result["behind"])


def test_the_last_control_plane_owns_the_add_ons():
    observed = {
        "target": "1.37.2",
        "role": "control_plane",
        "kubelet": NEW,
        "manifests": manifests(),
        "apiservers": [NEW, NEW, NEW],
        "kube_proxy": OLD,
    }
    assert left_to_do(observed)["next_step"] == "kubeadm upgrade node"
    assert left_to_do({**observed, "kube_proxy": NEW})["next_step"] == "none"
    assert left_to_do({**observed, "kube_proxy": None})["next_step"] == "none"  # no kube-proxy in the cluster


@pytest.mark.parametrize(("kubelet", "next_step"), [(OLD, "kubeadm upgrade node"), (NEW, "none")])
def test_worker(kubelet, next_step):
    result = left_to_do({"target": "1.37.2", "role": "worker", "kubelet": kubelet})
    assert result["next_step"] == next_step
    assert result["kubeadm"] == result["kubelet"] == (kubelet == OLD)


@pytest.mark.parametrize(
    ("observed", "message"),
    [
        ({"kubelet": "v1.38.0"}, "kubelet is v1.38.0, newer than the target v1.37.2"),
        ({"manifests": manifests(apiserver="v1.37.3")}, "kube-apiserver manifest is v1.37.3, newer"),
        ({"kube_proxy": "latest"}, "kube-proxy DaemonSet is not a Kubernetes version: 'latest'"),
        ({"apiservers": [NEW, "sha256"]}, "a kube-apiserver Pod is not a Kubernetes version"),
        ({"target": "1.37"}, "the target is not a Kubernetes version"),
        ({"role": "etcd"}, "role must be one of"),
    ],
)
def test_refuses(observed, message):
    with pytest.raises(ResumeError, match=message):
        first(**observed)


# --- the components_first order: every control plane's components, then the control-plane kubelets ---


def control_plane(order="components_first", **kw):
    observed = {
        "target": "1.37.2",
        "role": "control_plane",
        "order": order,
        "kubelet": OLD,
        "manifests": manifests(),
        "apiservers": [NEW, NEW, NEW],
        "kube_proxy": NEW,
        "control_planes": 3,
    }
    observed.update(kw)
    return left_to_do(observed)


@pytest.mark.parametrize(
    ("state", "observed", "next_step", "waits_for"),
    [
        # the normal state between the phases: components at the target, kubelet not, others still old
        (
            "components done here, two control planes still old",
            {"apiservers": [NEW, OLD, OLD]},
            "kubelet",
            ["2 of 3 kube-apiserver Pods not at the target yet"],
        ),
        ("every control plane's components done", {}, "kubelet", []),
        (
            "a kube-apiserver mirror Pod not listed (its node restarting)",
            {"apiservers": [NEW, NEW]},
            "kubelet",
            ["2 kube-apiserver Pods listed for 3 control planes"],
        ),
        (
            "this control plane's components not done",
            {"manifests": manifests(OLD, OLD, OLD), "apiservers": [NEW, OLD, OLD]},
            "kubeadm upgrade node",
            ["this control plane's components", "2 of 3 kube-apiserver Pods not at the target yet"],
        ),
        ("kubelet done", {"kubelet": NEW}, "none", []),
        # killed after its kubelet restart: already at the target, nothing waits
        ("kubelet done, others' kubelets not", {"kubelet": NEW, "apiservers": [NEW, NEW, NEW]}, "none", []),
    ],
)
def test_components_first_kubelet_waits_for_every_api_server(state, observed, next_step, waits_for):
    result = control_plane(**observed)
    assert (result["next_step"], result["kubelet_waits_for"]) == (next_step, waits_for), state


def test_node_by_node_never_waits_and_components_first_is_the_default_as_in_the_playbooks():
    waiting = {"apiservers": [NEW, OLD, OLD], "kube_proxy": OLD}
    assert control_plane("node_by_node", **waiting)["kubelet_waits_for"] == []
    # one default with the playbooks and the preflight plan (skewsafe_control_plane_order)
    assert (
        control_plane(None, **waiting)["kubelet_waits_for"]
        == control_plane("components_first", **waiting)["kubelet_waits_for"]
        != []
    )


def test_workers_never_wait_on_the_control_planes():
    result = left_to_do({"target": "1.37.2", "role": "worker", "order": "components_first", "kubelet": OLD})
    assert (result["next_step"], result["kubelet_waits_for"]) == ("kubeadm upgrade node", [])


def test_refuses_an_unknown_order():
    with pytest.raises(ResumeError, match="order must be one of components_first, node_by_node"):
        control_plane("kubelets_first")


def test_a_pre_release_is_behind_its_release_and_at_its_own_target():
    """The resume decision orders pre-releases: a node at v1.38.0-rc.1 still has the step to v1.38.0 ahead."""
    rc, ga = "v1.38.0-rc.1", "v1.38.0"
    at_rc = {"target": "1.38.0", "role": "worker", "kubelet": rc}
    assert left_to_do(at_rc)["behind"] == ["kubelet at v1.38.0-rc.1"]
    assert left_to_do({**at_rc, "target": "1.38.0-rc.1"})["any"] is False
    with pytest.raises(ResumeError, match=r"newer than the target v1\.38\.0-rc\.1"):
        left_to_do({"target": "1.38.0-rc.1", "role": "worker", "kubelet": ga})

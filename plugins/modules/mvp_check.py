#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: mvp_check
short_description: Prove that the Mixed Version Proxy works before the next node is upgraded
version_added: 0.1.0
description:
  - Reaches every kube-apiserver directly and proves, against the live servers, that the Mixed Version Proxy
    (KEP-4020) works. Fails with the server and the cause when it does not.
  - Runs on the controller (it is an action plugin) and polls until the checks pass in
    O(success_threshold) consecutive rounds or O(wait_timeout) runs out. It never changes anything and runs in
    check mode as well.
  - "Checks: C(versions) (skew, mode); C(identity_leases) (one fresh lease per server, unique host names, no
    crashed server still listed); C(readiness) (C(/readyz) and the MVP post-start hooks, present only with
    C(--peer-ca-file)); C(peer_tls) (each server's certificate verifies against the peer CA for
    C(kubernetes.default.svc) at the address it advertises to peers); C(requestheader_trust) (the peer discovery
    call with the front-proxy client certificate, when given); C(discovery_merge) (merged discovery of each
    proxying server holds what its peers serve); C(proxy_probe) (mixed mode: every older server asked for
    resources only newer servers serve answers 200, the same request with C(x-kubernetes-peer-proxied: true)
    answers 404, and C(apiserver_rerouted_request_total) rises); C(proxy_errors) (no new 503s or peer proxy
    errors while checking)."
  - "Causes it names: no C(--peer-ca-file); wrong peer CA; certificate without C(kubernetes.default.svc);
    unreachable or wrong advertise address; proxy client certificate rejected; gate off (1.35 default);
    crashed server still listed (its lease no longer renewed); a server that renews its lease but does not answer
    from the controller (the path from here, not the server); host name over 63 bytes or duplicated; version skew."
  - TLS verification is never turned off.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._auth
  - skewsafe.kubeadm._apiservers
  - skewsafe.kubeadm._attributes
  - skewsafe.kubeadm._attributes.controller_action
  - skewsafe.kubeadm._attributes.actiongroup_kubeadm
attributes:
  check_mode:
    support: full
    details: Read-only; it runs normally in check mode.
  diff_mode:
    support: none
  idempotent:
    support: full
options:
  mode:
    description:
      - V(mixed) while API servers run two versions (after the first control plane is upgraded, until the last);
        the older servers must proxy, and the live probe runs on each of them.
      - V(steady) when all run one minor (patch releases of one minor serve the same resources, so a patch
        upgrade has nothing to proxy); every server must have MVP on, ready for the next upgrade.
      - V(auto) picks from the versions found, V(mixed) only when they differ in the minor.
    type: str
    choices: [auto, steady, mixed]
    default: auto
  checks:
    description:
      - Run only these checks (default all).
    type: list
    elements: str
    choices: [versions, identity_leases, readiness, peer_tls, requestheader_trust, discovery_merge, proxy_probe, proxy_errors]
  wait_timeout:
    description:
      - Seconds to keep polling before failing.
    type: int
    default: 300
  wait_sleep:
    description:
      - Seconds between rounds.
    type: int
    default: 5
  success_threshold:
    description:
      - Consecutive passing rounds required, so that one lucky round is not enough.
    type: int
    default: 2
  proxy_sources:
    description:
      - Names (from O(endpoints)) of the servers that must have MVP on and proxy. Default by O(mode) - the
        older servers in mixed mode, all in steady mode.
      - Used while MVP is rolled out one control plane at a time - the servers done so far must pass, the others
        are still checked for leases, TLS and reachability.
    type: list
    elements: str
  peer_dials:
    description:
      - What the control-plane nodes saw dialling their peers - the registered results of
        M(skewsafe.kubeadm.apiserver_peer_dial_info), one per node (a loop's C(results) list fits as it is).
      - When given, the C(peer_tls) check judges each server by the dials made to its lease's peer address from the
        nodes, also for a server this controller cannot reach, and the controller does not dial the peer addresses
        itself (it only needs the API endpoints). A failure names the node it was seen from. A server no node
        dialled is still dialled from here.
      - The collection's roles pass it; without it the controller dials, which is only right when it shares the
        peers' network.
    type: list
    elements: dict
  fail_fast:
    description:
      - Stop before O(wait_timeout) when a cause that waiting cannot fix (for example no C(--peer-ca-file) on a
        ready server, a wrong peer CA) shows in two consecutive rounds.
    type: bool
    default: true
notes:
  - Needs the C(kubernetes) Python library on the controller (or in the execution environment).
  - The credentials need get/list on C(leases) in C(kube-system), list on the probed resources, and the
    non-resource URLs C(/version), C(/readyz), C(/metrics), C(/api), C(/apis); C(/etc/kubernetes/admin.conf)
    of a kubeadm cluster has them.
seealso:
  - module: skewsafe.kubeadm.apiserver_peers_info
  - name: KEP-4020 Unknown Version Interoperability Proxy
    description: The Mixed Version Proxy design.
    link: https://github.com/kubernetes/enhancements/tree/master/keps/sig-api-machinery/4020-unknown-version-interoperability-proxy
"""

EXAMPLES = r"""
- name: Gate | prove proxying from every old API server before upgrading the next control plane
  skewsafe.kubeadm.mvp_check:
    kubeconfig: "{{ playbook_dir }}/admin.conf"
    mode: mixed
    endpoints:
      - name: cp-1
        url: https://10.0.0.11:6443
      - name: cp-2
        url: https://10.0.0.12:6443
      - name: cp-3
        url: https://10.0.0.13:6443
    wait_timeout: 180
  run_once: true

- name: Before the upgrade, MVP must be on everywhere (endpoints found from the identity leases)
  skewsafe.kubeadm.mvp_check:
    mode: steady
  run_once: true
  register: mvp

- name: Show the evidence
  ansible.builtin.debug:
    var: mvp.checks
"""

RETURN = r"""
passed:
  description: Whether MVP was proved.
  returned: always
  type: bool
mode:
  description: The mode the checks ran in.
  returned: always
  type: str
  sample: mixed
outcome:
  description:
    - What the gate proved. V(proxied) - mixed, and every older server answered for resources only newer servers
      serve through a peer (404 locally, the rerouted counter rising). V(nothing_to_proxy) - mixed, but no resource
      differs between the versions (hooks, peer TLS and the discovery merge are proved; there was nothing to ask
      for). V(not_probed) - mixed, resources differ but none could be listed, or O(checks) left the probe out.
      V(steady) - one version, every server ready to proxy. V(failed) - not proved.
    - A gate that had nothing to probe passes with V(nothing_to_proxy) or V(not_probed) and says so in RV(msg);
      it never reports a proof of proxying.
  returned: always
  type: str
  choices: [proxied, nothing_to_proxy, not_probed, steady, failed]
  sample: proxied
msg:
  description: >-
    One line naming each failing server and cause, with what to do; or the success summary, which with nothing to
    probe reads like C(no resource differs between v1.37.2 and v1.38.0-beta.0; configuration proved (hooks, peer TLS,
    discovery merge\); nothing to proxy).
  returned: always
  type: str
checks:
  description: Results of the last round.
  returned: always
  type: list
  elements: dict
  contains:
    check:
      description: Check name.
      type: str
    server:
      description: Server the result is about (null for cluster-wide results).
      type: str
    passed:
      description: Whether it passed.
      type: bool
    detail:
      description: What was seen.
      type: str
    cause:
      description: The diagnosed cause when it failed.
      type: str
failed_checks:
  description: The failing entries of RV(checks).
  returned: always
  type: list
  elements: dict
history:
  description: Per check, how many results passed and failed over all rounds.
  returned: always
  type: dict
attempts:
  description: Rounds run.
  returned: always
  type: int
elapsed:
  description: Seconds spent.
  returned: always
  type: float
requests:
  description: HTTP requests made to the API servers.
  returned: always
  type: int
endpoints:
  description: The API server URLs checked.
  returned: always
  type: list
  elements: str
evidence:
  description: The last round's evidence (versions, leases, hooks, metrics, discovery, probes) per server.
  returned: always
  type: dict
"""

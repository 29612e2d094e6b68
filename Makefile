# skewsafe.kubeadm developer entry points. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
PYTHONPATH_HARNESS = $(SKEWSAFE_WORK)/collections:$(CURDIR)/tests/harness

.PHONY: test test-lab test-paths host-deps ee k8s-bins harness-up harness-down lab-up lab-down demo bench bench-first-peer bench-graceful bench-etcd-leader help

help:
	@echo "make test          run every test tier (sets up its own venv and binaries)"
	@echo "make test-lab      what is outside make test: three API server versions at once and the rest of the harness tests; newer ansible-core's sanity; navigator, fault injection and molecule; the other cluster shapes; 1.35 path"
	@echo "make test-paths    only the upgrade-path lab: a cluster at 1.35.4 upgraded to 1.36.5 (PATH_FROM_VERSION)"
	@echo "make host-deps     install the host's Debian packages (hack/host-packages.txt)"
	@echo "make ee            build the execution environment image (ansible-builder; cached) and print its tag"
	@echo "make k8s-bins      build the pinned upstream kubernetes/etcd binaries (cached by version)"
	@echo "make harness-up    start etcd + 3 real kube-apiservers (2 old, 1 new); prints endpoints"
	@echo "make harness-down  stop them"
	@echo "make lab-up        a kubeadm HA cluster (3 control planes, 2 workers) in containers, older version"
	@echo "make demo          lab-up, then upgrade it with skewsafe.kubeadm.upgrade and show the report"
	@echo "make lab-down      remove every container, network, rule and daemon the lab created"
	@echo "make bench         mvp_check micro-benchmark + lab upgrades under load, MVP on/off -> report (BENCH_TARGET=harness: no lab)"
	@echo "make bench-first-peer  the first-peer 404 window on the harness (FIRST_PEER_ARGS=\"--starts 30\"; no lab)"
	@echo "make bench-graceful    client errors through haproxy while kube-apiservers restart, per shutdown setting (GRACEFUL_ARGS; no lab)"
	@echo "make bench-etcd-leader what stopping the etcd leader costs the API servers, 1 s kill against 30 s grace (ETCD_LEADER_ARGS; running lab)"

test:
	hack/test.sh

test-lab:
	NEWER_CORE_PARTS="sanity units" TIERS="setup host-deps binaries harness-extra newer-core faults shapes paths" hack/test.sh

test-paths:
	TIERS="setup host-deps binaries paths" hack/test.sh

host-deps:
	hack/host-deps.sh install

ee: host-deps
	hack/ee/run.sh build

k8s-bins: host-deps
	hack/build-upstream.sh

harness-up: k8s-bins
	hack/harness.sh up $(HARNESS_ARGS)

harness-down:
	hack/harness.sh down

lab-up: k8s-bins
	lab/up.sh

lab-down:
	lab/down.sh

demo:
	hack/demo.sh

bench: k8s-bins
	bench/run.sh

bench-first-peer: k8s-bins
	bench/first_peer.sh $(FIRST_PEER_ARGS)

bench-graceful: k8s-bins
	bench/graceful_restart.sh $(GRACEFUL_ARGS)

bench-etcd-leader:
	bench/etcd_leader_stop.sh $(ETCD_LEADER_ARGS)

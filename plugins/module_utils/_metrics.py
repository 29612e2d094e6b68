# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Just enough of the Prometheus text format to read kube-apiserver counters."""

from __future__ import annotations

import re

_SAMPLE_RE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$")
_LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

MVP_METRICS = (
    "apiserver_rerouted_request_total",
    "apiserver_peer_proxy_errors_total",
    "apiserver_peer_discovery_sync_errors_total",
)


def parse_samples(text, names=None):
    """``[(name, {label: value}, float)]`` for every sample (of ``names`` when given)."""
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE_RE.match(line)
        if not match:
            continue
        name = match.group(1)
        if names is not None and name not in names:
            continue
        labels = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _LABEL_RE.findall(match.group(2) or "")}
        try:
            value = float(match.group(3))
        except ValueError:
            continue
        samples.append((name, labels, value))
    return samples


def total(samples, name, **labels):
    """Sum of the samples of ``name`` whose labels include ``labels``."""
    return sum(
        value
        for sample_name, sample_labels, value in samples
        if sample_name == name and all(sample_labels.get(k) == v for k, v in labels.items())
    )

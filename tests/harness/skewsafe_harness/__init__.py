"""Test harness: etcd and several real kube-apiservers configured by the real kubeadm."""

from .cluster import Harness, Response, down_from_state
from .pins import HarnessError

__all__ = ["Harness", "HarnessError", "Response", "down_from_state"]

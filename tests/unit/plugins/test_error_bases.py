"""Every error class the collection's helpers define derives from one base per side (module_utils: SkewsafeError;
plugin_utils: PluginError, itself a SkewsafeError), so a caller can tell the collection's own errors apart."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

from ansible_collections.skewsafe.kubeadm.plugins import module_utils, plugin_utils
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._errors import SkewsafeError
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

# Not errors of ours: a stand-in for the kubernetes client's class, and the lock store's internal 409 signal.
NOT_OURS = {"ApiException", "Conflict"}


def _error_classes(package):
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, Exception) and name not in NOT_OURS:
                yield f"{info.name.split('.plugins.')[1]}.{name}", cls


@pytest.mark.parametrize(("package", "base"), [(module_utils, SkewsafeError), (plugin_utils, PluginError)])
def test_one_base_per_side(package, base):
    classes = dict(_error_classes(package))
    assert len(classes) > 5, classes  # the walk found the modules
    assert [name for name, cls in classes.items() if not issubclass(cls, base)] == []

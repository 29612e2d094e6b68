# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Editing of kubeadm component extraArgs and of the feature-gates flag value.

Pure functions over plain data; no I/O. Two storage forms exist:

* v1beta4: a list of ``{name, value}`` mappings; a name may repeat.
* v1beta3: a mapping of name to value.

Rule for repeated names (v1beta4): setting a name leaves exactly one entry of
that name, at the position of the first one, with the new value; removing a
name removes every entry of it. kube-apiserver's ``--feature-gates`` flag merges
repeated occurrences, so gates are read from all entries in order.
"""

from __future__ import annotations

import re

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._errors import SkewsafeError

FEATURE_GATES_ARG = "feature-gates"

_ARG_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_GATE_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
# Go's strconv.ParseBool, which kube's feature-gate flag uses.
_GO_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_GO_FALSE = ("0", "f", "F", "FALSE", "false", "False")


class ExtraArgsError(SkewsafeError, ValueError):
    """Invalid input or an existing value that cannot be understood."""


def validate_arg_updates(updates, option_name):
    """Check a name -> value|None mapping before anything is changed."""
    if updates is None:
        return {}
    if not isinstance(updates, dict):
        raise ExtraArgsError(f"{option_name} must be a mapping of argument name to string value (or null to remove)")
    for name, value in updates.items():
        if not isinstance(name, str) or not name:
            raise ExtraArgsError(f"{option_name}: argument names must be non-empty strings, got {name!r}")
        if name.startswith("-"):
            raise ExtraArgsError(
                f"{option_name}: argument name {name!r} starts with '-'; give the flag name without dashes, "
                f"e.g. {name.lstrip('-')!r}"
            )
        if not _ARG_NAME_RE.match(name):
            raise ExtraArgsError(f"{option_name}: {name!r} is not a valid flag name (letters, digits, '.', '_', '-')")
        if value is not None and not isinstance(value, str):
            raise ExtraArgsError(
                f"{option_name}: the value of {name!r} must be a string, got {type(value).__name__} {value!r}; "
                "quote it in YAML (e.g. '\"true\"')"
            )
    return dict(updates)


def validate_gate_updates(updates, option_name):
    """Check a gate -> bool|None mapping; accepts the strings 'true'/'false' from templating."""
    if updates is None:
        return {}
    if not isinstance(updates, dict):
        raise ExtraArgsError(f"{option_name} must be a mapping of feature gate name to true, false or null")
    result = {}
    for gate, value in updates.items():
        if not isinstance(gate, str) or not _GATE_NAME_RE.match(gate):
            raise ExtraArgsError(f"{option_name}: {gate!r} is not a feature gate name (CamelCase letters and digits)")
        if isinstance(value, bool) or value is None:
            result[gate] = value
        elif isinstance(value, str) and value.lower() in ("true", "false"):
            result[gate] = value.lower() == "true"
        else:
            raise ExtraArgsError(
                f"{option_name}: the value of gate {gate!r} must be a boolean (true/false) or null to remove it, "
                f"got {value!r}"
            )
    return result


def parse_feature_gates(value):
    """Parse a ``--feature-gates`` value into an ordered dict gate -> bool.

    Tolerates spaces and empty items; a gate that repeats keeps its first
    position and its last value, as kube's flag parsing does.
    """
    gates = {}
    for item in (value or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep or not name:
            raise ExtraArgsError(
                f"existing feature-gates value {value!r} is malformed at {item!r} (want Name=true|false)"
            )
        if raw in _GO_TRUE:
            gates[name] = True
        elif raw in _GO_FALSE:
            gates[name] = False
        else:
            raise ExtraArgsError(f"existing feature-gates value {value!r}: {name} has non-boolean value {raw!r}")
    return gates


def format_feature_gates(gates):
    return ",".join(f"{name}={'true' if on else 'false'}" for name, on in gates.items())


def merge_feature_gates(current_values, updates):
    """Apply gate updates to the effective gates of all current values.

    Returns ``(new_value_or_None, changed_gate_names)``. ``new_value`` is None when
    no gate remains. When nothing changes the caller keeps the stored text as is.
    """
    effective = {}
    for value in current_values:
        effective.update(parse_feature_gates(value))
    changed = []
    for gate, on in updates.items():
        if on is None:
            if gate in effective:
                del effective[gate]
                changed.append(gate)
        elif effective.get(gate) is not on:
            effective[gate] = on
            changed.append(gate)
    return (format_feature_gates(effective) or None), changed


class ExtraArgs:
    """Ordered view over one component's extraArgs in either storage form."""

    def __init__(self, raw, list_form):
        self.list_form = list_form
        if raw is None:
            raw = [] if list_form else {}
        if list_form:
            if not isinstance(raw, list):
                raise ExtraArgsError("extraArgs must be a list of {name, value} in kubeadm.k8s.io/v1beta4")
            entries = []
            for item in raw:
                if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                    raise ExtraArgsError(f"extraArgs entry {item!r} has no string 'name'")
                entries.append((item["name"], item.get("value", "")))
        else:
            if not isinstance(raw, dict):
                raise ExtraArgsError("extraArgs must be a mapping of name to value in kubeadm.k8s.io/v1beta3")
            entries = list(raw.items())
        self.entries = entries

    def values(self, name):
        return [value for entry_name, value in self.entries if entry_name == name]

    def set(self, name, value):
        """Leave exactly one ``name`` entry with ``value``; return whether anything changed."""
        positions = [i for i, (entry_name, _v) in enumerate(self.entries) if entry_name == name]
        if len(positions) == 1 and self.entries[positions[0]][1] == value:
            return False
        if not positions:
            self.entries.append((name, value))
            return True
        first = positions[0]
        self.entries = [e for i, e in enumerate(self.entries) if i == first or e[0] != name]
        self.entries[first] = (name, value)
        return True

    def remove(self, name):
        before = len(self.entries)
        self.entries = [e for e in self.entries if e[0] != name]
        return len(self.entries) != before

    def dump(self):
        if self.list_form:
            return [{"name": name, "value": value} for name, value in self.entries]
        return dict(self.entries)


def apply_to_extra_args(extra_args, arg_updates, gate_updates):
    """Apply validated updates to an :class:`ExtraArgs`; return the changed names."""
    if FEATURE_GATES_ARG in arg_updates and gate_updates:
        raise ExtraArgsError(
            "set feature gates either through the feature gates option or as a 'feature-gates' extra arg, not both"
        )
    changed = []
    for name, value in arg_updates.items():
        done = extra_args.remove(name) if value is None else extra_args.set(name, value)
        if done:
            changed.append(name)
    if gate_updates:
        new_value, changed_gates = merge_feature_gates(extra_args.values(FEATURE_GATES_ARG), gate_updates)
        if changed_gates:
            if new_value is None:
                extra_args.remove(FEATURE_GATES_ARG)
            else:
                extra_args.set(FEATURE_GATES_ARG, new_value)
            changed.append(FEATURE_GATES_ARG)
    return changed

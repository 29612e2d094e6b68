from __future__ import annotations

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._extra_args import (
    ExtraArgs,
    ExtraArgsError,
    apply_to_extra_args,
    merge_feature_gates,
    parse_feature_gates,
    validate_arg_updates,
    validate_gate_updates,
)


def test_parse_feature_gates_tolerates_spaces_empty_items_and_repeats():
    gates = parse_feature_gates(" A=true , B=false,,A=false ,C=True")
    assert gates == {"A": False, "B": False, "C": True}
    assert list(gates) == ["A", "B", "C"]  # first position, last value


@pytest.mark.parametrize("value", ["A", "A=maybe", "=true"])
def test_parse_feature_gates_rejects_malformed(value):
    with pytest.raises(ExtraArgsError):
        parse_feature_gates(value)


def test_merge_feature_gates_keeps_other_gates_and_reports_changes():
    value, changed = merge_feature_gates(["Foo=true,Bar=false"], {"UnknownVersionInteroperabilityProxy": True})
    assert value == "Foo=true,Bar=false,UnknownVersionInteroperabilityProxy=true"
    assert changed == ["UnknownVersionInteroperabilityProxy"]


def test_merge_feature_gates_no_change_when_effective_value_matches():
    # A repeated gate whose last value already matches: nothing to do.
    value, changed = merge_feature_gates(["X=false, X=true"], {"X": True})
    assert changed == []
    assert value == "X=true"


def test_merge_feature_gates_reads_repeated_flag_entries_in_order():
    value, changed = merge_feature_gates(["A=true", "A=false,B=true"], {"B": None})
    assert changed == ["B"]
    assert value == "A=false"


def test_merge_feature_gates_removing_last_gate_returns_none():
    assert merge_feature_gates(["A=true"], {"A": None}) == (None, ["A"])
    assert merge_feature_gates([], {"A": None}) == (None, [])


def test_list_form_set_collapses_repeats_at_first_position():
    args = ExtraArgs([{"name": "a", "value": "1"}, {"name": "b", "value": "2"}, {"name": "a", "value": "3"}], True)
    assert args.set("a", "9") is True
    assert args.dump() == [{"name": "a", "value": "9"}, {"name": "b", "value": "2"}]
    assert args.set("a", "9") is False


def test_list_form_set_with_same_value_but_duplicates_is_a_change():
    args = ExtraArgs([{"name": "a", "value": "1"}, {"name": "a", "value": "1"}], True)
    assert args.set("a", "1") is True
    assert args.dump() == [{"name": "a", "value": "1"}]


def test_remove_removes_every_entry():
    args = ExtraArgs([{"name": "a", "value": "1"}, {"name": "b", "value": "2"}, {"name": "a", "value": "3"}], True)
    assert args.remove("a") is True
    assert args.dump() == [{"name": "b", "value": "2"}]
    assert args.remove("a") is False


def test_map_form_keeps_order():
    args = ExtraArgs({"z": "1", "a": "2"}, False)
    args.set("m", "3")
    assert list(args.dump().items()) == [("z", "1"), ("a", "2"), ("m", "3")]


def test_wrong_storage_form_is_reported():
    with pytest.raises(ExtraArgsError, match="list"):
        ExtraArgs({"a": "1"}, True)
    with pytest.raises(ExtraArgsError, match="mapping"):
        ExtraArgs([{"name": "a", "value": "1"}], False)
    with pytest.raises(ExtraArgsError, match="name"):
        ExtraArgs([{"value": "1"}], True)


@pytest.mark.parametrize(
    "updates, message",
    [
        ({"--peer-ca-file": "x"}, "starts with '-'"),
        ({"": "x"}, "non-empty"),
        ({"a b": "x"}, "not a valid flag name"),
        ({"a=b": "x"}, "not a valid flag name"),
        ({"v": 2}, "must be a string"),
        ({"v": True}, "must be a string"),
        ("peer-ca-file", "must be a mapping"),
    ],
)
def test_validate_arg_updates_rejects(updates, message):
    with pytest.raises(ExtraArgsError, match=message):
        validate_arg_updates(updates, "api_server_extra_args")


def test_validate_arg_updates_accepts_null_for_removal():
    assert validate_arg_updates({"a": None, "b": "x"}, "o") == {"a": None, "b": "x"}


@pytest.mark.parametrize("value", ["yes", 1, "on", [], "maybe"])
def test_validate_gate_updates_rejects_non_booleans(value):
    with pytest.raises(ExtraArgsError, match="must be a boolean"):
        validate_gate_updates({"Gate": value}, "feature_gates")


def test_validate_gate_updates_accepts_bools_strings_and_null():
    assert validate_gate_updates({"A": True, "B": "False", "C": None}, "f") == {"A": True, "B": False, "C": None}
    with pytest.raises(ExtraArgsError, match="not a feature gate name"):
        validate_gate_updates({"not-a-gate": True}, "f")


def test_apply_refuses_gates_in_two_places():
    args = ExtraArgs([], True)
    with pytest.raises(ExtraArgsError, match="not both"):
        apply_to_extra_args(args, {"feature-gates": "A=true"}, {"B": True})


def test_apply_sets_args_and_gates_together():
    args = ExtraArgs([{"name": "feature-gates", "value": "A=true"}], True)
    changed = apply_to_extra_args(args, {"peer-ca-file": "/etc/kubernetes/pki/ca.crt"}, {"B": False, "A": None})
    assert changed == ["peer-ca-file", "feature-gates"]
    assert args.dump() == [
        {"name": "feature-gates", "value": "B=false"},
        {"name": "peer-ca-file", "value": "/etc/kubernetes/pki/ca.crt"},
    ]

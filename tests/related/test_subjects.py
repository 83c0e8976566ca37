"""The one reader of what an item acts on (its subjects) and of the kind of action it asks for, over the shapes the
frameworks send (the shared fixtures and the simulator's samples) and over hostile values."""

import json
from pathlib import Path

import pytest

from holds.related.subjects import (
    ITEM_KEY,
    NO_SETTINGS,
    SUBJECTS_PER_ITEM,
    KeySetting,
    KeySettings,
    Subject,
    action_kind,
    key_list,
    same_kind,
    subjects_of,
)

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "holds"


def items_of_fixtures():
    """Each fixture hold's items, as (hold id, item id, title, data)."""
    found = []
    for path in sorted(FIXTURES.glob("*.json")) if FIXTURES.is_dir() else []:
        text = json.loads(path.read_text())
        for hold in text.get("holds", [text]) if isinstance(text, dict) else text:
            if isinstance(hold, dict) and isinstance(hold.get("items"), list):
                found += [
                    (hold["hold_id"], item["id"], item.get("title", ""), item.get("data")) for item in hold["items"]
                ]
    return found


SAMPLE_ITEMS = [  # the simulator's sample holds h_12..h_15, as each framework names the refund of order A-1001
    ("h_12", "A-1001", "A-1001 · 49.90", {"order_id": "A-1001", "amount": "49.90"}),
    ("h_13", "toolu_01A9xQ2mZ", "Refund 49.90 on A-1001", {"order_id": "A-1001", "amount": "49.90", "reason": "x"}),
    ("h_14", "call_1", "refund", {"order_id": "A-1001", "amount": "49.90"}),
    ("h_15", "call_1", "refund", {"order_id": "A-1001", "amount": "49.90"}),
]


@pytest.mark.parametrize("hold_id, item_id, title, data", SAMPLE_ITEMS, ids=[item[0] for item in SAMPLE_ITEMS])
def test_every_framework_s_refund_of_a_1001_names_the_order_and_asks_a_refund_or_unknown(hold_id, item_id, title, data):
    found = subjects_of(item_id, data)

    assert [subject.value for subject in found] == ["a-1001"]
    assert found[0].key == "order_id"
    assert action_kind(title, found) in ("refund", "")


def test_the_fixtures_read_alike_with_the_simulator_s_samples():
    read = {}
    for hold_id, item_id, _, data in items_of_fixtures():
        read.setdefault(hold_id, []).extend(subject.value for subject in subjects_of(item_id, data))

    if not read:
        pytest.skip("the shared fixtures are not beside this checkout")
    assert read["h_12"] == read["h_14"] == read["h_15"] == ["a-1001"]
    assert read["h_13"] == ["a-1001", "a-1002"]


def test_llamaindex_s_title_leaves_no_kind_and_matches_every_kind():
    assert action_kind("A-1001 · 49.90", [Subject("order_id", "a-1001")]) == ""
    assert same_kind("", "refund") and same_kind("refund", "") and same_kind("refund", "refund")
    assert not same_kind("refund", "cancel_subscription")


def test_the_kind_is_the_first_word_left_of_the_title():
    assert action_kind("Refund 129.00 on A-1002", [Subject("order_id", "a-1002")]) == "refund"
    assert action_kind("cancel_subscription", [Subject("subscription_id", "sub_8812")]) == "cancel_subscription"
    assert action_kind("Send a replacement for order #A-1008", [Subject("order_id", "a-1008")]) == "send"
    assert action_kind(None, []) == "" and action_kind("", []) == ""


def test_an_item_id_that_names_an_order_is_a_subject_and_a_tool_call_id_is_not():
    assert subjects_of("A-1001", None) == [Subject(ITEM_KEY, "a-1001")]
    for tool_call in ("call_1", "toolu_01A9xQ2mZ", "fc_12ab", "CALL_7"):
        assert subjects_of(tool_call, {}) == []


def test_a_data_key_spelt_as_the_item_id_s_label_is_read_as_any_key_and_the_item_id_stays_the_item_s_own():
    found = subjects_of("A-1001", {ITEM_KEY: "B-2002"})

    assert found == [Subject(ITEM_KEY, "a-1001")]  # "item id" in the data names no subject: no _id, not named
    assert subjects_of("call_1", {ITEM_KEY: "B-2002"}) == []


def test_the_keys_read_and_those_skipped():
    data = {
        "order": "A-1",
        "customer": "Cu-2",
        "customer_id": 3,
        "invoice_id": "in_4",
        "account_id": "ac-5",
        "subscription_id": "sub_6",
        "warehouseId": "W-7",
        "shipment_id": "S-8",
        "id": "x-1",
        "call_id": "x-2",
        "tool_call_id": "x-3",
        "tool_use_id": "x-4",
        "toolCallId": "x-5",
        "reference": "not-a-key",
        "parcel_id": "call_abc",
        "amount": "49.90",
    }

    found = subjects_of("call_9", data)

    assert [subject.key for subject in found] == [
        "order",
        "customer",
        "customer_id",
        "invoice_id",
        "account_id",
        "subscription_id",
        "warehouseId",
        "shipment_id",
    ]
    assert found[2] == Subject("customer_id", "3")


def test_values_are_trimmed_case_folded_and_lose_one_leading_hash():
    assert subjects_of("call_1", {"order_id": "  #A-1001 "}) == [Subject("order_id", "a-1001")]
    assert subjects_of("call_1", {"order_id": "##A"}) == [Subject("order_id", "#a")]
    assert subjects_of("call_1", {"order_id": "STRASSE-ß"}) == [Subject("order_id", "strasse-ss")]


@pytest.mark.parametrize(
    "value",
    [
        "x" * 10_000,
        "x" * 201,
        "A-1\x00",
        "A-1\nA-2",
        "\ud800",
        "",
        "   ",
        "#",
        ["A-1001"],
        {"id": "A-1001"},
        True,
        None,
        49.9,
        10**5000,
    ],
    ids=[
        "10,000 chars",
        "201 chars",
        "NUL",
        "newline",
        "lone surrogate",
        "empty",
        "spaces",
        "hash",
        "list",
        "object",
        "bool",
        "null",
        "float",
        "huge int",
    ],
)
def test_a_hostile_value_is_skipped(value):
    assert subjects_of("call_1", {"order_id": value}) == []


def test_hostile_data_and_keys_name_nothing_and_raise_nothing():
    many = {f"k{n}_id": f"v{n}" for n in range(1000)}

    assert subjects_of("call_1", ["order_id", "A-1"]) == []
    assert subjects_of("call_1", "A-1001") == []
    assert subjects_of("call_1", {"order_id\x00": "A-1", "x" * 10_000 + "_id": "A-2"}) == []
    assert len(subjects_of("A-0", many)) == SUBJECTS_PER_ITEM
    assert subjects_of("call_1", {"order_id": "A-1", "orderId": "a-1 "}) == [Subject("order_id", "a-1")]


def test_admins_add_and_take_away_keys_per_agent_and_capability():
    settings = KeySettings(
        (
            KeySetting("support-agno", "", key_list("sku, reference"), frozenset()),
            KeySetting("support-agno", "billing", frozenset(), key_list("customer_id item id")),
        )
    )
    data = {"sku": "LAMP-1", "reference": "R-9", "customer_id": "C-1", "order_id": "A-1"}

    support = subjects_of("A-1", data, settings.for_hold("support-agno", "support"))
    billing = subjects_of("A-1", data, settings.for_hold("support-agno", "billing"))
    other = subjects_of("A-1", data, settings.for_hold("upsonic-support", "support"))

    assert [subject.value for subject in support] == ["lamp-1", "r-9", "c-1", "a-1"]
    assert [subject.value for subject in billing] == ["lamp-1", "r-9", "a-1"]
    assert other == subjects_of("A-1", data, NO_SETTINGS.for_hold("upsonic-support", "support"))
    assert [subject.value for subject in other] == ["c-1", "a-1"]

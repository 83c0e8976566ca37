"""The decision form as a reviewer meets it: words for labels, yes/no and empty shown plainly, and after a
refused submit a summary of every error, each linking to its field, with the fields marked invalid."""

import re
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from holds.deciding import editing, form_layout, review
from holds.models import Hold
from tests.helpers.reviewing import field_name, review_form, through_summary

pytestmark = pytest.mark.django_db


class _Elements(HTMLParser):
    """Every element of a page with its attributes, in order."""

    def __init__(self):
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, {name: value or "" for name, value in attrs}))


def elements(html: str) -> list[tuple[str, dict[str, str]]]:
    reader = _Elements()
    reader.feed(html)
    return reader.elements


def by_id(html: str) -> dict[str, tuple[str, dict[str, str]]]:
    return {attributes["id"]: (tag, attributes) for tag, attributes in elements(html) if "id" in attributes}


def hold_page(client, hold) -> str:
    response = client.get(reverse("hold", args=[hold.pk]))
    assert response.status_code == 200
    return response.content.decode()


def refused(client, hold, form) -> str:
    response = client.post(reverse("hold-review", args=[hold.pk]), form)
    assert response.status_code == 422
    return response.content.decode()


def summary_links(html: str) -> list[tuple[str, str]]:
    """The error summary's links: (target id, text)."""
    block = re.search(r'<div class="error-summary".*?</div>', html, re.S)
    assert block, "no error summary on the page"
    return [
        (target, re.sub(r"<[^>]+>", "", text))
        for target, text in re.findall(r'<a href="#([^"]+)">(.*?)</a>', block[0], re.S)
    ]


# Labels and values


@pytest.mark.parametrize(
    "key, label",
    [
        ("order_id", "Order id"),
        ("refundAmount", "Refund amount"),
        ("at_period_end", "At period end"),
        ("HTTPStatus", "HTTP status"),
        ("gift-note", "Gift note"),
        ("amount", "Amount"),
        ("", "Value"),
        ("__", "__"),
    ],
)
def test_a_key_becomes_words_for_its_label(key, label):
    assert editing.human_label(key) == label


def test_each_field_shows_its_label_in_words_with_the_raw_key_beside_it(alice_client, samples):
    html = hold_page(alice_client, samples["h_12"])

    assert re.search(
        r'<span class="field-name untrusted">Order id</span> <code class="field-key untrusted">order_id</code>', html
    )
    assert re.search(
        r'<span class="field-name untrusted">Amount</span> <code class="field-key untrusted">amount</code>', html
    )


def test_yes_no_is_a_switch_with_words_and_empty_is_a_placeholder(alice_client, samples):
    hold = samples["h_19"]  # express=True, gift_note=None, skus and address as JSON
    html = hold_page(alice_client, hold)
    inputs = by_id(html)

    tag, express = inputs[field_name(hold, 0, "express")]
    assert (tag, express["type"], express["role"]) == ("input", "checkbox", "switch")
    assert "checked" in express
    assert '<span class="switch-word switch-yes" aria-hidden="true">Yes</span>' in html
    assert ">False<" not in html and ">True<" not in html
    tag, gift_note = inputs[field_name(hold, 0, "gift_note")]
    assert (tag, gift_note["placeholder"], gift_note["value"]) == ("input", "empty", "")
    assert "null" not in gift_note["placeholder"]


def test_a_json_value_gets_a_monospace_area_tall_enough_for_all_of_it(alice_client, samples):
    hold = samples["h_19"]
    html = hold_page(alice_client, hold)
    tag, address = by_id(html)[field_name(hold, 0, "address")]
    shown = re.search(rf'<textarea id="{field_name(hold, 0, "address")}"[^>]*>\n(.*?)</textarea>', html, re.S)[1]

    assert tag == "textarea" and "json" in address["class"].split() and "data-autogrow" in address
    assert int(address["rows"]) >= shown.count("\n") + 1 > 5


def test_bulky_values_fold_below_the_others_and_open_when_one_of_them_is_wrong(alice_client, samples):
    hold = samples["h_19"]
    skus, address = field_name(hold, 0, "skus"), field_name(hold, 0, "address")
    folded = re.compile(r'<details class="more-data"( open)?>.*?</details>', re.S)

    shown = folded.search(hold_page(alice_client, hold))
    assert shown and shown[1] is None
    assert f'id="{skus}"' in shown[0] and f'id="{address}"' in shown[0]
    assert 'name="' + field_name(hold, 0, "quantity") + '"' not in shown[0]
    refused_page = folded.search(refused(alice_client, hold, review_form(hold, **{skus: "[1,"})))
    assert refused_page[1] == " open"


def test_read_only_fields_say_yes_no_and_empty_rather_than_python_words(alice_client, samples):
    hold = samples["h_20"]  # approve or reject only: its fields are shown, not edited
    html = hold_page(alice_client, hold)
    at_period_end = re.search(rf'<output id="{field_name(hold, 0, "at_period_end")}"[^>]*>(.*?)</output>', html, re.S)[
        1
    ]

    assert at_period_end == "No"


# A refused submit


def test_a_refused_form_lists_every_error_as_a_link_to_its_field(alice_client, samples):
    hold = samples["h_19"]
    quantity, address = field_name(hold, 0, "quantity"), field_name(hold, 0, "address")
    html = refused(alice_client, hold, review_form(hold, **{quantity: "two", address: "{broken"}))

    links = dict(summary_links(html))
    assert list(links) == [quantity, address]  # the scalar fields first, then the folded ones, as the form shows them
    assert links[quantity] == "Quantity: a whole number is needed"
    assert links[address].startswith("Address: line 1 column 2")
    targets = by_id(html)
    assert all(target in targets for target in links)
    assert 'id="error-summary" tabindex="-1"' in html


def test_each_bad_field_is_marked_invalid_and_described_by_its_message(alice_client, samples):
    hold = samples["h_19"]
    quantity, order_id = field_name(hold, 0, "quantity"), field_name(hold, 0, "order_id")
    html = refused(alice_client, hold, review_form(hold, **{quantity: "two"}))
    inputs = by_id(html)

    _, bad = inputs[quantity]
    assert bad["aria-invalid"] == "true"
    assert f"{quantity}-error" in bad["aria-describedby"].split()
    assert inputs[f"{quantity}-error"][0] == "p"
    assert "a whole number is needed" in re.search(rf'<p class="field-error" id="{quantity}-error">(.*?)</p>', html)[1]
    _, good = inputs[order_id]
    assert "aria-invalid" not in good


def test_a_missing_action_links_to_the_items_approve_choice(alice_client, samples):
    hold = samples["h_13"]  # two items: each error names its item
    form = review_form(hold)
    del form["item-1-action"]
    html = refused(alice_client, hold, form)

    ((target, text),) = summary_links(html)
    item = review.blank(hold)[1].item
    assert target == form_layout.action_input_id("item-1") == "item-1-approve"
    assert text == f"Action ({item.title}): Choose approve or reject."
    _, approve = by_id(html)["item-1-approve"]
    assert approve["aria-invalid"] == "true" and "item-1-action-error" in approve["aria-describedby"].split()


def test_a_page_without_errors_has_no_summary_and_nothing_invalid(alice_client, samples):
    html = hold_page(alice_client, samples["h_19"])

    assert "error-summary" not in html.replace("decision-form", "")
    assert "aria-invalid" not in html


def test_the_run_has_one_heading_once_it_was_fetched(alice_client, samples):
    hold = samples["h_12"]
    assert alice_client.get(reverse("run-context", args=[hold.pk])).status_code == 200
    assert Hold.objects.get(pk=hold.pk).run_snapshot  # the page now shows the stored run at once

    assert hold_page(alice_client, hold).count("<h2>Run</h2>") == 1


def test_the_hold_page_links_the_forms_own_stylesheet_and_script(alice_client, samples):
    html = hold_page(alice_client, samples["h_12"])

    assert '<link rel="stylesheet" href="/static/holds/decision-form.css">' in html
    assert '<script src="/static/holds/decision-form.js" defer></script>' in html


# The decimal comma, through the form


def test_a_decimal_comma_is_read_as_the_decimal_point(alice_client, samples):
    hold = samples["h_12"]
    amount = field_name(hold, 0, "amount")
    through_summary(alice_client, hold, review_form(hold, **{amount: "20,00"}))

    sent = Hold.objects.get(pk=hold.pk).latest_decision().items.get()
    assert (sent.action, sent.data["amount"]) == ("edit", "20.00")


def test_an_ambiguous_comma_says_exactly_what_to_type(alice_client, samples):
    hold = samples["h_12"]
    amount = field_name(hold, 0, "amount")
    html = refused(alice_client, hold, review_form(hold, **{amount: "1,234"}))

    ((target, text),) = summary_links(html)
    assert target == amount
    assert text == "Amount: write 1234 or 1.234: a comma can&#x27;t tell thousands from decimals here"
    assert Hold.objects.get(pk=hold.pk).decisions.count() == 0

"""Forms as a browser sends them: the fields of a form on a page, read from its HTML."""

from html.parser import HTMLParser

BUTTON_TYPES = {"submit", "button", "image", "reset"}


def fields_of(html: str, form_id: str) -> dict[str, list[str]]:
    """The values the form ``form_id`` submits from its inputs (hidden ones too), by name; buttons left out."""
    reader = _FormReader(form_id)
    reader.feed(html)
    reader.close()
    if not reader.found:
        raise AssertionError(f"no form with id {form_id!r} on the page")
    return reader.fields


class _FormReader(HTMLParser):
    def __init__(self, form_id: str):
        super().__init__()
        self.form_id = form_id
        self.found = False
        self.inside = False
        self.fields: dict[str, list[str]] = {}

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "form" and attributes.get("id") == self.form_id:
            self.found = self.inside = True
        elif tag == "input" and self.inside and attributes.get("name"):
            kind = (attributes.get("type") or "text").lower()
            if kind in BUTTON_TYPES or (kind in ("radio", "checkbox") and "checked" not in attributes):
                return
            value = attributes.get("value")
            if value is None:
                value = "on" if kind in ("radio", "checkbox") else ""
            self.fields.setdefault(attributes["name"], []).append(value)

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False

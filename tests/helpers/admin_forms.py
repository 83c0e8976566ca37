"""Driving the Django admin as a browser would: a form's values posted back."""

from django.forms import MultiWidget

# A webhook's add form, its secret among the values (which the audit must never record).
WEBHOOK_FORM = {
    "name": "ops",
    "url": "https://hooks.example.com/x",
    "format": "slack",
    "secret": "s3cr3t-value",
    "events": ["expired"],
    "active": "on",
}


def admin_form_data(response) -> dict:
    """The admin change form's current values, as the browser would post them back."""
    form = response.context["adminform"].form
    data = {}
    for name, field in form.fields.items():
        if field.disabled:
            continue
        value = form[name].value()
        if isinstance(field.widget, MultiWidget):
            for index, part in enumerate(field.widget.decompress(value)):
                data[f"{name}_{index}"] = "" if part is None else part
        elif isinstance(value, bool):
            if value:
                data[name] = "on"
        elif isinstance(value, (list, tuple)):
            data[name] = [str(part) for part in value]
        elif value is not None:
            data[name] = value
    for inline in response.context.get("inline_admin_formsets", []):  # e.g. a group's team scope, left blank
        management = inline.formset.management_form
        data.update({management[name].html_name: management[name].value() for name in management.fields})
    return data

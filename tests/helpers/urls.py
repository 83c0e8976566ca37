"""Every named URL of the project, for tests that must reach them all."""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.urls import get_resolver

from audit.models import AuditEvent
from holds.links import action_links
from holds.models import Decision, Hold

SIGNING_OUT = {"logout", "admin:logout"}  # would sign the fuzzing clients out, leaving every later request anonymous


def named_urls() -> list[tuple[str, str, list[str]]]:
    """Every named URL of the project: (name, path with %(param)s placeholders, parameter names)."""
    found = {}

    def walk(resolver, prefix: str, namespace: str):
        for key, possibilities in resolver.reverse_dict.lists():
            if isinstance(key, str):
                for possibility in possibilities:
                    for path_format, params in possibility[0]:
                        found[namespace + key] = (prefix + path_format, list(params))
        for name, (sub_prefix, sub_resolver) in resolver.namespace_dict.items():
            walk(sub_resolver, prefix + sub_prefix, f"{namespace}{name}:")

    walk(get_resolver(), "", "")
    return sorted((name, path, params) for name, (path, params) in found.items() if name not in SIGNING_OUT)


def real_path_values(name: str, param: str) -> list[str]:
    """The values of one path parameter that name real objects, so that requests reach past the 404."""
    if param == "app_label":
        return sorted({model._meta.app_label for model in admin.site._registry})
    if param == "file_id":
        return ["f_1", "f_9", "f_404"]
    if param == "token":  # one-tap links bound to nobody, so that requests reach past the link's own checks
        return [action_links.make(hold, "reject") for hold in Hold.objects.all()[:20]]
    if param == "content_type_id":
        return [str(pk) for pk in ContentType.objects.values_list("pk", flat=True)]
    if name.startswith("admin:"):
        model = next(
            (
                model
                for model in admin.site._registry
                if name.startswith(f"admin:{model._meta.app_label}_{model._meta.model_name}_")
            ),
            None,
        )
        model = model or get_user_model()
        return [str(pk) for pk in model.objects.values_list("pk", flat=True)[:20]]
    model = {"audit:decision": Decision, "audit:event": AuditEvent}.get(name, Hold)
    return [str(pk) for pk in model.objects.values_list("pk", flat=True)[:20]]

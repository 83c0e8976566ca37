"""Every named URL of the project, for tests that must reach them all."""

from django.urls import get_resolver

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

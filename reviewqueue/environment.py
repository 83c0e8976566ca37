"""Read settings from environment variables, failing loudly on malformed values.

Every reader raises ``ImproperlyConfigured`` naming the variable, so a typo in a
deployment stops start-up with a message an operator can act on instead of a
confusing failure later.
"""

import ipaddress
import os
import re
from string import Formatter
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    return None if value is None else value.strip()


def string(name: str, default: str = "") -> str:
    value = _raw(name)
    return default if value is None or value == "" else value


def boolean(name: str, default: bool = False) -> bool:
    value = _raw(name)
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}")


def integer(name: str, default: int, minimum: int = 0) -> int:
    value = _raw(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}") from None
    if number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {number}")
    return number


def seconds(name: str, default: float) -> float:
    value = _raw(name)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number of seconds, not {value!r}") from None
    if number <= 0:
        raise ImproperlyConfigured(f"{name} must be more than 0 seconds, not {value}")
    return number


def url(name: str, default: str = "", schemes: tuple[str, ...] = ("http", "https")) -> str:
    """A URL with one of ``schemes`` and a host; a trailing slash is dropped."""
    value = string(name, default)
    if not value:
        return value
    parts = urlsplit(value)
    if parts.scheme not in schemes or not parts.netloc:
        allowed = " or ".join(f"{scheme}://" for scheme in schemes)
        raise ImproperlyConfigured(f"{name} must be a URL starting with {allowed}, not {value!r}")
    return value.rstrip("/")


def names(name: str, default: str, required: bool = True) -> list[str]:
    """A comma-separated list of non-empty names; empty only when not ``required``."""
    items = [item.strip() for item in string(name, default).split(",")]
    items = [item for item in items if item]
    if not items and required:
        raise ImproperlyConfigured(f"{name} must name at least one value")
    return items


def choice(name: str, choices: tuple[str, ...], default: str) -> str:
    """One of ``choices`` (compared in lower case)."""
    value = string(name, default).lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return value


def header(name: str, default: str = "") -> str:
    """An HTTP header name (``X-Forwarded-Proto``) as its ``request.META`` key (``HTTP_X_FORWARDED_PROTO``), or ""."""
    value = string(name, default)
    if not value:
        return ""
    if not re.fullmatch(r"[A-Za-z0-9]+(-[A-Za-z0-9]+)*", value):
        raise ImproperlyConfigured(f"{name} must be an HTTP header name such as X-Forwarded-Proto, not {value!r}")
    return "HTTP_" + value.upper().replace("-", "_")


def url_template(name: str, placeholders: tuple[str, ...], required: tuple[str, ...] = ()) -> str:
    """A URL with ``{placeholder}`` fields (e.g. ``https://x.example/runs/{run_id}``), or "".

    Only the named placeholders are allowed, bare (no format spec or conversion: the value is
    put in as is), and the URL must be http(s) with a host once they are filled in.
    """
    value = string(name)
    if not value:
        return value
    try:
        fields = [
            (field, spec, conversion) for _, field, spec, conversion in Formatter().parse(value) if field is not None
        ]
    except ValueError as problem:
        raise ImproperlyConfigured(f"{name} is not a valid template ({problem}): {value!r}") from None
    allowed = ", ".join(f"{{{placeholder}}}" for placeholder in placeholders)
    for field, spec, conversion in fields:
        if field not in placeholders or spec or conversion:
            raise ImproperlyConfigured(f"{name} may only use the placeholders {allowed}, not {{{field}}}: {value!r}")
    missing = [placeholder for placeholder in required if placeholder not in {field for field, _, _ in fields}]
    if missing:
        raise ImproperlyConfigured(f"{name} must contain {{{missing[0]}}}: {value!r}")
    filled = urlsplit(value.format(**dict.fromkeys(placeholders, "x")))
    if filled.scheme not in ("http", "https") or not filled.netloc:
        raise ImproperlyConfigured(f"{name} must be a URL starting with http:// or https://, not {value!r}")
    return value


def retired(name: str, instead: str) -> None:
    """Refuse a setting that is no longer read, rather than start with less, or more, than the operator meant."""
    if string(name):
        raise ImproperlyConfigured(f"{name} is no longer read: {instead}")


def networks(name: str, everything: bool = True) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """A comma-separated list of IP addresses or networks (``10.0.0.5, 10.1.0.0/16``), or [] when unset.

    ``everything=False`` refuses a network of every address (``0.0.0.0/0``, ``::/0``).
    """
    found = []
    for item in (part.strip() for part in string(name).split(",")):
        if not item:
            continue
        try:
            found.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} must list IP addresses or networks such as 10.0.0.0/8, not {item!r}"
            ) from None
        if not everything and found[-1].prefixlen == 0:
            raise ImproperlyConfigured(f"{name} must not list every address ({item}): name the addresses you mean")
    return found

"""Rendering pages: one Jinja environment over the package's templates (HTML autoescaped), with the
filters that format numbers for people.

Money is formatted here, not with Babel: the pages are in English and show US dollars only, and
Babel's CLDR locale data (an 11 MB wheel, about 30 MB installed) would be shipped to format one pattern
that Python's own ``format`` writes exactly (``$1,234,567``; a true minus sign before negatives)."""

from __future__ import annotations

import functools
from typing import Any

import jinja2
from litestar import Response

from service.web.labels import input_label, input_value

__all__ = ["page", "percent", "usd"]


def usd(value: float | None, cents: bool = False) -> str:
    """Dollars with thousands separators ($1,234,567 or $1,234.56); a dash for no value."""
    if value is None:
        return "—"
    text = f"${abs(value):,.2f}" if cents else f"${abs(value):,.0f}"
    return f"−{text}" if value < 0 else text


def percent(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}%}"


@functools.cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("service.web", "templates"),
        autoescape=jinja2.select_autoescape(default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["usd"] = usd
    env.filters["percent"] = percent
    env.filters["input_label"] = input_label
    env.filters["input_value"] = lambda value, name: input_value(name, value)
    env.filters["fields"] = lambda struct: [(n, getattr(struct, n)) for n in struct.__struct_fields__]
    return env


def page(template: str, status_code: int = 200, **context: Any) -> Response[str]:
    """The rendered template as an HTML response."""
    html = _environment().get_template(template).render(**context)
    return Response(html, status_code=status_code, media_type="text/html")

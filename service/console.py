"""Terminal output shared by the feature CLIs: tables and JSON, the way every ``gpuplan`` command prints."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
from tabulate import tabulate

from service.errors import InvalidParameter
from service.http import readable_json

__all__ = ["DASH_VALUED_OPTIONS", "glue_dash_values", "print_json", "print_table", "read_json_body"]


def _cell(value: Any) -> Any:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value


def print_table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> None:
    """A plain table: ``-`` for missing values, yes/no for flags, numbers in their shortest form."""
    print(tabulate([[_cell(v) for v in row] for row in rows], headers=list(headers), floatfmt="g"))


DASH_VALUED_OPTIONS = ("--sort",)
"""Options whose value may start with ``-`` (``--sort -price_per_hour_usd``: descending)."""


def glue_dash_values(argv: Sequence[str]) -> list[str]:
    """``--sort -x`` as ``--sort=-x``: argparse takes a separate ``-x`` for an unknown option, so the
    README's ``--sort -price_per_hour_usd`` would fail as written."""
    glued: list[str] = []
    items = iter(argv)
    for item in items:
        if item in DASH_VALUED_OPTIONS:
            value = next(items, None)
            if value is not None and value.startswith("-") and value != "--":
                glued.append(f"{item}={value}")
                continue
            glued.append(item)
            if value is not None:
                glued.append(value)
            continue
        glued.append(item)
    return glued


def print_json(value: object) -> None:
    """One line of JSON (what ``--json`` prints), its numbers as the API gives them (``readable_json``)."""
    print(readable_json(value).decode())


def read_json_body(path: str, body_type: Any, what: str) -> Any:
    """A request body from a JSON file (``-``: stdin), decoded strictly like the API does; a problem is
    an :class:`InvalidParameter` naming the field (or ``what``, the argument, when it is the file)."""
    try:
        raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise InvalidParameter(what, f"cannot read {path!r}: {exc.strerror}") from None
    try:
        return msgspec.json.decode(raw, type=body_type)
    except msgspec.ValidationError as exc:
        message = str(exc)
        field = message.rsplit("at `$.", 1)[1].rstrip("`") if "at `$." in message else what
        raise InvalidParameter(field, message) from None
    except msgspec.DecodeError as exc:
        raise InvalidParameter(what, f"{path!r} is not valid JSON: {exc}") from None

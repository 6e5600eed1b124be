"""``?`` placeholders (DuckDB's, used in all of gpuplan's SQL) as psycopg's ``%s``.

A ``?`` becomes ``%s`` except inside string literals, quoted identifiers and comments, where it is
text. Every literal ``%`` becomes ``%%``, inside literals too: psycopg reads ``%`` everywhere in a
statement that has parameters.
"""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = ["to_format_placeholders"]

# A quoted string ('' escapes a quote), a quoted identifier, a comment, or a placeholder.
_TOKEN: Final = re.compile(r"'(?:[^']|'')*'?|\"(?:[^\"]|\"\")*\"?|--[^\n]*|/\*.*?(?:\*/|\Z)|\?", re.S)


def _replace(match: re.Match[str]) -> str:
    token = match.group(0)
    return "%s" if token == "?" else token


@functools.lru_cache(maxsize=1024)
def to_format_placeholders(sql: str) -> str:
    """``sql`` with ``%`` doubled and ``?`` as ``%s`` outside literals and comments (cached: the
    same statements run again and again)."""
    return _TOKEN.sub(_replace, sql.replace("%", "%%"))

"""How deeply a JSON text nests, found without parsing it (parsers recurse, and fail at depth ~1,000).

Every JSON body the service reads, request bodies and JSON sheets alike, is checked against one
limit, far above what any valid body needs (four levels for a plan request) and far below the
recursion limit of the decoders.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_JSON_DEPTH", "json_depth", "json_depth_exceeds"]

MAX_JSON_DEPTH: Final = 64
"""The deepest nesting of arrays and objects accepted in a JSON body or sheet."""

_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET: Final = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(text: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` in ``text`` (brackets inside strings do not count)."""
    brackets = _STRING.sub(b"", text).translate(None, _NOT_BRACKET)
    depth = deepest = 0
    for byte in brackets:
        if byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def json_depth_exceeds(text: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``text`` nests deeper than ``limit`` (cheap test first: too few brackets to exceed it)."""
    return text.count(b"[") + text.count(b"{") > limit and json_depth(text) > limit

"""HTTP conventions every feature's routes share: strict query strings, strictly typed JSON bodies,
complete ``Allow`` answers, the admin guard for writes, the upload size limit, and JSON whose numbers
a person can read (``readable_json``).

Writes need ``Authorization: Bearer <GPUPLAN_ADMIN_TOKEN>``: without a configured token every write is
refused (403, saying how to enable writes); a missing or wrong token is a 401. Tokens are compared in
constant time.
"""

from __future__ import annotations

import hmac
import json
import re
import types
import typing
from typing import Annotated, Any, Final

import msgspec
from litestar import HttpMethod, Request, Response, route
from litestar.connection import ASGIConnection
from litestar.exceptions import ValidationException
from litestar.handlers import HTTPRouteHandler
from litestar.handlers.base import BaseRouteHandler
from litestar.params import QueryParameter
from litestar.serialization import default_serializer
from litestar.types import Serializer

from pricing import MAX_JSON_DEPTH, json_depth_exceeds
from service.errors import Forbidden, InvalidParameter, Unauthorized
from service.settings import Settings

__all__ = [
    "MAX_UPLOAD_BYTES",
    "READABLE_DIGITS",
    "Limit",
    "Offset",
    "ReadableResponse",
    "allow_header_handler",
    "body_of",
    "check_request",
    "decode_body_strictly",
    "is_admin",
    "readable_json",
    "reject_deep_json",
    "reject_unknown_query_params",
    "require_admin",
]

MAX_UPLOAD_BYTES: Final = 20_000_000
"""Largest sheet an upload (price sheet, serving profiles) may carry (413 above it)."""

Limit = Annotated[int, QueryParameter(ge=1, le=1000)]
"""The page size of every list (``limit``)."""
Offset = Annotated[int, QueryParameter(ge=0, le=1_000_000)]
"""Where a page starts (``offset``)."""

READABLE_DIGITS: Final = 12
"""Significant digits of every number in JSON answers. Binary floating point leaves noise in the 16th
and 17th digit (``0.1 + 0.2`` is ``0.30000000000000004``, a sum of prices ``189846.71999999997``);
12 digits drop it and keep every digit that means something."""
_LONG_NUMBER: Final = re.compile(rb"\d[\d.]{13,}")
"""A run of 14 or more digits: the only place a float can carry more than 12 significant digits."""
_JSON_MEDIA_TYPE: Final = re.compile(r"application/(.+\+)?json")


def _readable_float(text: str) -> float:
    return float(f"{float(text):.{READABLE_DIGITS}g}")


_READABLE_DECODER: Final = msgspec.json.Decoder(float_hook=_readable_float)


def readable_json(value: object, enc_hook: Serializer = default_serializer) -> bytes:
    """``value`` as JSON with every float at ``READABLE_DIGITS`` significant digits (strings, ints and
    key order untouched). JSON without a run of 14 digits is returned as encoded: no second pass."""
    encoded = msgspec.json.encode(value, enc_hook=enc_hook)
    if _LONG_NUMBER.search(encoded) is None:
        return encoded
    return msgspec.json.encode(_READABLE_DECODER.decode(encoded))


class _Parts:
    """Attributes looked up in ``values`` first, then in each source in turn."""

    def __init__(self, sources: tuple[object, ...], values: dict[str, Any]) -> None:
        self._sources = sources
        self._values = values

    def __getattr__(self, name: str) -> Any:
        if name in self._values:
            return self._values[name]
        for source in self._sources:
            if hasattr(source, name):
                return getattr(source, name)
        raise AttributeError(name)


def body_of[B: msgspec.Struct](body: type[B], *sources: object, **values: Any) -> B:
    """An answer's ``body`` struct filled by field name from ``values``, then from the ``sources`` (the
    solver's structs) in order: no field copied by hand, and a field no source has is an error."""
    return msgspec.convert(_Parts(sources, values), body, from_attributes=True)


class ReadableResponse[T](Response[T]):
    """The app's response class: JSON bodies (``application/json``, ``application/problem+json``) are
    encoded by ``readable_json``; anything else as Litestar does."""

    def render(self, content: Any, media_type: str, enc_hook: Serializer = default_serializer) -> bytes:
        if isinstance(content, (bytes, str)) or not _JSON_MEDIA_TYPE.match(media_type):
            return super().render(content, media_type, enc_hook)
        return readable_json(content, enc_hook)


def _declared_query_names(request: Request[Any, Any, Any]) -> dict[str, bool]:
    """Every query parameter the handler declares → whether it is a whole number."""
    handler = request.route_handler
    names: dict[str, bool] = {}
    for name, field in handler.parsed_fn_signature.parameters.items():
        kwarg = field.kwarg_definition
        if isinstance(kwarg, QueryParameter):
            types = [t.annotation for t in field.inner_types] or [field.annotation]
            names[kwarg.name or name] = int in types and bool not in types
    return names


_WHOLE_NUMBER: Final = re.compile(r"[+-]?[0-9]+")


_AT_PATH: Final = re.compile(r" - at `\$\.?([^`]*)`$")
_NAMED_FIELD: Final = re.compile(r"(?:unknown|missing required) field `([^`]+)`")


async def check_request(request: Request[Any, Any, Any]) -> None:
    """Every request: no unknown query parameter, and a JSON body of the handler's type decoded strictly."""
    await reject_unknown_query_params(request)
    await reject_deep_json(request)
    await decode_body_strictly(request)


async def reject_deep_json(request: Request[Any, Any, Any]) -> None:
    """A JSON body (a request body or an uploaded JSON sheet) nested deeper than ``MAX_JSON_DEPTH`` is a
    400 before any parser recurses into it (they fail near depth 1,000 with a RecursionError)."""
    handler = request.route_handler
    params = handler.parsed_fn_signature.parameters if isinstance(handler, HTTPRouteHandler) else {}
    if "data" not in params and "body" not in params:
        return
    body = await request.body()
    if body.lstrip()[:1] in (b"[", b"{") and json_depth_exceeds(body):
        raise InvalidParameter("body", f"JSON nested deeper than {MAX_JSON_DEPTH} levels")


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen.add(key)
    return dict(pairs)


def _reject_duplicate_keys(body: bytes) -> None:
    """An object naming a key twice is a 400 naming it (JSON parsers keep the last one silently, so
    two clients could read one body differently); malformed JSON is left to the decoder."""
    try:
        json.loads(body, object_pairs_hook=_no_duplicate_keys, parse_int=_keep_digits)
    except _DuplicateKey as exc:
        raise InvalidParameter(
            exc.key, f"the JSON body names the key {exc.key!r} twice in one object"
        ) from None
    except (ValueError, RecursionError):
        return


def _keep_digits(digits: str) -> str:
    """Integers stay text while looking for duplicates (``int`` refuses over 4,300 digits)."""
    return digits


def _is_struct_body(annotation: Any) -> bool:
    """A Struct, or a union of Structs (a body tagged by ``kind``, such as a plan request)."""
    members = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else (annotation,)
    return all(isinstance(m, type) and issubclass(m, msgspec.Struct) for m in members)


async def decode_body_strictly(request: Request[Any, Any, Any]) -> None:
    """A JSON body must match its type without coercion: ``0`` is not ``false``, ``"8"`` is not ``8``.

    Litestar converts bodies in msgspec's lax mode (it shares that step with query strings, which are
    all text); decoding the raw body strictly first rejects the values lax mode would coerce, with a 400
    naming the field, as any other body error.
    """
    handler = request.route_handler
    field = (
        handler.parsed_fn_signature.parameters.get("data") if isinstance(handler, HTTPRouteHandler) else None
    )
    if field is None or not _is_struct_body(field.annotation):
        return
    body = await request.body()  # whatever the content type says: Litestar reads these bodies as JSON
    if not body:
        return
    _reject_duplicate_keys(body)
    try:
        msgspec.json.decode(body, type=field.annotation, strict=True)
    except msgspec.ValidationError as exc:
        text = str(exc)
        at = _AT_PATH.search(text)
        message = _AT_PATH.sub("", text)
        named = _NAMED_FIELD.search(message)
        path = [at.group(1)] if at and at.group(1) else []
        key = ".".join([*path, named.group(1)] if named else path) or "body"
        raise ValidationException(
            detail=f"Validation failed for {request.method} {request.url.path}",
            extra=[{"message": message, "key": key, "source": "body", "qualified": True}],
        ) from None
    except msgspec.DecodeError:
        return  # malformed JSON: Litestar's own decoding answers it


async def reject_unknown_query_params(request: Request[Any, Any, Any]) -> None:
    """A misspelt filter (``?gpus=H100``) is a 400, not a silently unfiltered list; so is a parameter
    given twice (``limit=1&limit=2``: which one holds?) and a whole number written otherwise than in
    digits (``limit=1e3``). Handlers that read their query themselves (the web pages: a form's
    fields) say so with ``opt={"form_query": True}``."""
    if not request.query_params or request.route_handler.opt.get("form_query"):
        return
    allowed = _declared_query_names(request)
    for key in request.query_params:
        if key not in allowed:
            expected = ", ".join(sorted(allowed)) or "none"
            raise InvalidParameter(
                key or "query", f"unknown query parameter {key!r}; this endpoint accepts: {expected}"
            )
        values = request.query_params.getall(key)
        if len(values) > 1:
            raise InvalidParameter(key, f"given {len(values)} times; give it once")
        if allowed[key] and not _WHOLE_NUMBER.fullmatch(values[0].strip()):
            raise InvalidParameter(key, f"must be a whole number in ASCII digits, got {values[0]!r}")


def allow_header_handler(path: str) -> HTTPRouteHandler:
    """An explicit OPTIONS handler for a static ``path`` served by several handlers (GET and POST).

    Litestar 2.25 builds its automatic OPTIONS answer when a path's first handler is registered and does
    not update it when a second handler joins that path, so ``Allow`` would list only the first method.
    Registered before the others, this handler answers with every method the app routes for the path.
    """

    def options(request: Request[Any, Any, Any]) -> Response[None]:
        methods = request.app.route_handler_method_map.get(request.url.path, {})
        return Response(None, status_code=204, headers={"Allow": ", ".join(sorted(methods))})

    return route(path, http_method=[HttpMethod.OPTIONS], include_in_schema=False, sync_to_thread=False)(
        options
    )


def is_admin(connection: ASGIConnection[Any, Any, Any, Any]) -> bool:
    """Whether the request carries the configured admin token (compared in constant time): the
    operational details (database location, driver errors, file paths) are shown only then."""
    expected: str | None = connection.app.state.settings.admin_token
    scheme, _space, token = connection.headers.get("authorization", "").partition(" ")
    if not expected or scheme.lower() != "bearer" or not token:
        return False
    return hmac.compare_digest(token.strip().encode(), expected.encode())


def require_admin(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """Litestar guard for write endpoints (guards run before dependencies: the app state holds the settings)."""
    settings: Settings = connection.app.state.settings
    expected = settings.admin_token
    if not expected:
        raise Forbidden("writes are disabled: the operator has not set GPUPLAN_ADMIN_TOKEN")
    header = connection.headers.get("authorization", "")
    scheme, _space, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("send Authorization: Bearer <admin token>", headers={"WWW-Authenticate": "Bearer"})
    if not hmac.compare_digest(token.strip().encode(), expected.encode()):
        raise Unauthorized("wrong admin token", headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})

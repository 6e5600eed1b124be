"""Complete the generated OpenAPI document: the catalog's known values, zero bounds, stable names.

Filters such as ``provider`` or ``gpu`` only accept values the catalog knows (anything else is a 400
with close matches). Saying so in the schema lets clients and schema-driven tools (code generators,
fuzzers) send valid values. The lists are those of the catalog snapshot the served document was last
brought up to: :class:`CatalogDocument` brings it up to the current snapshot before the document is
served, so a price sheet that adds or drops a provider or region changes the schema with what the API
accepts (issue 28 D9; before, the lists were those of the start, before the boot refresh).

Litestar names a component after its class, prefixed by the module path where two classes share a
name; :func:`keep_component_names` keeps the names clients know when such a class moves.

The browsable pages (Swagger UI at ``/schema``, Scalar at ``/schema/scalar``) load their scripts and
styles from this server (:func:`docs_pages`, :data:`DOCS_ASSETS`): pinned releases shipped in
``service/data/openapi_ui`` (``README-openapi_ui.md``: source, version, licence), so they work offline
and nothing comes from a CDN.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

import msgspec
from litestar import Litestar, Router
from litestar._openapi.plugin import OpenAPIPlugin
from litestar.datastructures import CacheControlHeader
from litestar.openapi.plugins import OpenAPIRenderPlugin, ScalarRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import (
    Discriminator,
    OpenAPIMediaType,
    OpenAPIType,
    Parameter,
    Reference,
    RequestBody,
    Schema,
    SecurityScheme,
)
from litestar.static_files import create_static_files_router

from service.catalog.gpu_names import gpu_spellings
from service.db.snapshot import CatalogSnapshot

DOCS_ASSETS: Final = "/schema/assets"
"""Where the API documentation pages' scripts and styles are served from (this server)."""
_UI_FILES: Final = Path(__file__).parent / "data" / "openapi_ui"
_SWAGGER: Final = f"{DOCS_ASSETS}/swagger-ui-5.36.0"
_SCALAR: Final = f"{DOCS_ASSETS}/scalar-api-reference-1.76.4"
_SCALAR_OPTIONS: Final = {
    "withDefaultFonts": False,  # else its fonts come from Scalar's font host
    "telemetry": False,  # on by default
    "showDeveloperTools": "never",  # the toolbar on localhost: hosted services (deploy, SDKs)
    "agent": {"disabled": True},  # "Ask AI": Scalar's hosted assistant
}
"""Scalar's configuration: nothing it would fetch from or send to Scalar's services."""
_FAVICON: Final = f"<link rel='icon' type='image/png' href='{_SWAGGER}/favicon-32x32.png'>"


def docs_pages() -> list[OpenAPIRenderPlugin]:
    """Swagger UI at ``/schema/`` and Scalar at ``/schema/scalar``, each on the shipped, pinned release
    (Scalar without the parts that reach Scalar's services: ``_SCALAR_OPTIONS``)."""
    swagger = SwaggerRenderPlugin(
        path="/",
        js_url=f"{_SWAGGER}/swagger-ui-bundle.js",
        css_url=f"{_SWAGGER}/swagger-ui.css",
        standalone_preset_js_url=f"{_SWAGGER}/swagger-ui-standalone-preset.js",
        favicon=_FAVICON,
    )
    scalar = ScalarRenderPlugin(
        path="/scalar",
        js_url=f"{_SCALAR}/standalone.js",
        css_url=f"{_SCALAR}/style.css",
        favicon=_FAVICON,
        options=_SCALAR_OPTIONS,
    )
    return [swagger, scalar]


def docs_assets_router() -> Router:
    """The shipped files of both pages under ``DOCS_ASSETS`` (versioned paths: cached for a year)."""
    return create_static_files_router(
        path=DOCS_ASSETS,
        directories=[_UI_FILES],
        include_in_schema=False,
        cache_control=CacheControlHeader(public=True, max_age=365 * 24 * 3600),
        name="openapi-ui-assets",
    )


__all__ = [
    "ADMIN_SCHEME",
    "DOCS_ASSETS",
    "CatalogDocument",
    "docs_assets_router",
    "docs_pages",
    "document_admin_security",
    "document_body_enum",
    "document_known_values",
    "document_raw_bodies",
    "document_tagged_union",
    "enum_member_names",
    "forbid_unknown_body_fields",
    "keep_component_names",
    "restore_body_zero_bounds",
]


@dataclasses.dataclass
class _NamedEnum(Schema):
    """A string enum with ``x-enum-varnames``: the member names client generators give its values.

    Accepted GPU spellings differ only in case or punctuation (``A10`` and ``a10``, ``A100-80G-PCIe``
    and ``A100_80G_PCIE``); generators derive member names from the values and fail on (or silently
    merge) such pairs. Explicit names, unique however a generator re-cases them, keep every value.
    """

    enum_varnames: list[str] | None = dataclasses.field(default=None, metadata={"alias": "x-enum-varnames"})


def enum_member_names(values: Sequence[str]) -> list[str]:
    """A valid, distinct upper-case identifier for each value (distinct even ignoring underscores)."""
    names: list[str] = []
    seen: set[str] = set()
    for value in values:
        base = re.sub(r"[^0-9A-Za-z]+", "_", value).strip("_").upper() or "VALUE"
        base = base if base[0].isalpha() else f"V_{base}"
        name, n = base, 1
        while name.replace("_", "") in seen:
            n += 1
            name = f"{base}_{n}"
        seen.add(name.replace("_", ""))
        names.append(name)
    return names


def _with_enum(schema: Schema, values: Iterable[str]) -> Schema:
    """``schema`` (or its string branch) listing ``values``, each with a member name."""
    options = schema.one_of or schema.any_of or []
    if any(isinstance(o, Schema) and o.type == "string" for o in options):
        named = [
            _with_enum(o, values) if isinstance(o, Schema) and o.type == "string" else o for o in options
        ]
        if schema.one_of:
            schema.one_of = named
        else:
            schema.any_of = named
        return schema
    ordered = sorted(values, key=str.casefold)
    copied = {f.name: getattr(schema, f.name) for f in dataclasses.fields(schema)}
    return _NamedEnum(**{**copied, "enum": ordered, "enum_varnames": enum_member_names(ordered)})


def document_known_values(app: Litestar, snapshot: CatalogSnapshot) -> None:
    """Mutate the app's OpenAPI document before it is first served."""
    known = {
        ("/v1/offers", "gpu"): gpu_spellings(snapshot),
        ("/v1/offers", "provider"): sorted(snapshot.providers),
        ("/v1/offers", "region"): sorted(snapshot.regions),
        ("/v1/profiles", "gpu"): gpu_spellings(snapshot),
        ("/v1/profiles/serving", "gpu"): gpu_spellings(snapshot),
        ("/v1/plans", "gpu"): gpu_spellings(snapshot),
        ("/v1/profiles", "model"): sorted(snapshot.profile_models),
        ("/v1/profiles", "task"): sorted(snapshot.profile_tasks),
        ("/v1/profiles", "metric"): sorted(snapshot.profile_metrics),
        ("/v1/profiles", "precision"): sorted(snapshot.profile_precisions),
        ("/v1/gpus", "vendor"): sorted({g.vendor for g in snapshot.gpus.values()}),
    }
    paths = app.openapi_schema.paths or {}
    for (path, name), values in known.items():
        item = paths.get(path)
        operation = item.get if item is not None else None
        for parameter in (operation.parameters or []) if operation is not None else []:
            schema = getattr(parameter, "schema", None)
            if isinstance(parameter, Parameter) and parameter.name == name and isinstance(schema, Schema):
                parameter.schema = _with_enum(schema, values)
    _restore_zero_bounds(app)


class CatalogDocument:
    """Keeps the known values ``document(app, snapshot)`` writes into the app's OpenAPI document those
    of the current catalog snapshot: :meth:`bring_up_to_date`, called on the event loop before the
    document is served (where it is rendered: one thread), writes them again when the snapshot changed
    since they were written.

    ``document`` must replace the values it writes (as :func:`document_known_values` and
    :func:`document_body_enum` do), not add to them. Litestar 2.25 caches the document twice: the
    OpenAPI model (which ``document`` mutates in place) and its rendered dict, which nothing public
    drops (``Litestar.update_openapi_schema`` builds a new document and discards it; litestar-org/
    litestar PR #4984 makes it drop both caches): the dict cache is dropped here."""

    def __init__(
        self,
        snapshot: Callable[[], CatalogSnapshot],
        document: Callable[[Litestar, CatalogSnapshot], None],
        written: int | None = None,
    ) -> None:
        self._snapshot = snapshot
        self._document = document
        self._generation = written
        """The generation whose values the document holds (``written``: those of the start, written
        after this object was made, so that a change in between is written again)."""

    def bring_up_to_date(self, app: Litestar) -> None:
        snapshot = self._snapshot()
        if snapshot.generation == self._generation:
            return
        self._document(app, snapshot)
        self._generation = snapshot.generation
        app.plugins.get(OpenAPIPlugin)._openapi_schema = None  # rendered again when next served


def _restore_zero_bounds(app: Litestar) -> None:
    """Litestar drops zero bounds (``ge=0``, ``gt=0``) of optional numbers from the schema; put them back."""
    paths = app.openapi_schema.paths or {}
    for route in app.routes:
        item = paths.get(route.path)
        if item is None:
            continue
        for handler in getattr(route, "route_handlers", []):
            for method in handler.http_methods:
                operation = getattr(item, method.lower(), None)
                if operation is None:
                    continue
                by_name = {getattr(p, "name", None): p for p in operation.parameters or []}
                for name, field in handler.parsed_fn_signature.parameters.items():
                    kwarg = field.kwarg_definition
                    parameter = by_name.get(getattr(kwarg, "name", None) or name)
                    schema = getattr(parameter, "schema", None)
                    if kwarg is None or not isinstance(schema, Schema):
                        continue
                    numeric = [
                        b
                        for b in schema.one_of or []
                        if isinstance(b, Schema) and b.type in ("number", "integer")
                    ]
                    for branch in [schema, *numeric]:
                        if getattr(kwarg, "ge", None) == 0:
                            branch.minimum = 0
                        if getattr(kwarg, "gt", None) == 0:
                            branch.exclusive_minimum = 0


def _numeric_branches(schema: Schema) -> list[Schema]:
    branches = [b for b in schema.one_of or schema.any_of or [] if isinstance(b, Schema)]
    return [b for b in [schema, *branches] if b.type in ("number", "integer") or b is schema]


def restore_body_zero_bounds(app: Litestar, body_types: Sequence[type[msgspec.Struct]]) -> None:
    """The same zero-bound repair for request-body components, taken from msgspec's own JSON Schema."""
    components = app.openapi_schema.components.schemas or {}
    _, truth = msgspec.json.schema_components(body_types)
    for name, component in truth.items():
        target = components.get(name)
        if target is None or not target.properties:
            continue
        for prop, prop_schema in component.get("properties", {}).items():
            options = prop_schema.get("anyOf", [prop_schema])
            bounds = {k: o[k] for o in options for k in ("minimum", "exclusiveMinimum") if o.get(k) == 0}
            litestar_prop = target.properties.get(prop)
            if not bounds or not isinstance(litestar_prop, Schema):
                continue
            for branch in _numeric_branches(litestar_prop):
                if "minimum" in bounds:
                    branch.minimum = 0
                if "exclusiveMinimum" in bounds:
                    branch.exclusive_minimum = 0


def forbid_unknown_body_fields(app: Litestar, body_types: Sequence[type[msgspec.Struct]]) -> None:
    """``additionalProperties: false`` on every request-body component whose struct forbids unknown
    fields (msgspec's own JSON Schema says which), as the server answers 400 to an unknown field."""
    components = app.openapi_schema.components.schemas or {}
    _, truth = msgspec.json.schema_components(body_types)
    for name, component in truth.items():
        target = components.get(name)
        if isinstance(target, Schema) and component.get("additionalProperties") is False:
            target.additional_properties = False


def document_body_enum(app: Litestar, component_name: str, prop_name: str, values: Iterable[str]) -> None:
    """List the accepted values of one request-body property (e.g. ``ModelSpec.name``) in the schema."""
    component = (app.openapi_schema.components.schemas or {}).get(component_name)
    prop = component.properties.get(prop_name) if component is not None and component.properties else None
    if isinstance(prop, Schema) and component is not None and component.properties is not None:
        component.properties[prop_name] = _with_enum(prop, values)


def _retarget(node: object, refs: Mapping[str, str]) -> None:
    """Point every reference under ``node`` whose target is a key of ``refs`` at its value."""
    if isinstance(node, Reference):
        node.ref = refs.get(node.ref, node.ref)
    elif isinstance(node, dict):
        for value in node.values():
            _retarget(value, refs)
    elif isinstance(node, list | tuple):
        for value in node:
            _retarget(value, refs)
    elif dataclasses.is_dataclass(node):
        for field in dataclasses.fields(node):
            _retarget(getattr(node, field.name), refs)


def keep_component_names(app: Litestar, names: Mapping[str, str]) -> None:
    """Rename schema components (generated name → published name) and every reference to them."""
    schemas = app.openapi_schema.components.schemas or {}
    for generated, published in names.items():
        schemas[published] = schemas.pop(generated)
    app.openapi_schema.components.schemas = dict(sorted(schemas.items()))
    prefix = "#/components/schemas/"
    _retarget(app.openapi_schema, {prefix + old: prefix + new for old, new in names.items()})
    _distinct_titles(app.openapi_schema.components.schemas)


def _distinct_titles(schemas: Mapping[str, Schema | Reference]) -> None:
    """Components that share a ``title`` (two classes named ``OfferRef``) are titled after their
    component name instead: generators name their model classes after titles and refuse duplicates."""
    by_title: dict[str, list[str]] = {}
    for name, schema in schemas.items():
        if isinstance(schema, Schema) and schema.title:
            by_title.setdefault(schema.title, []).append(name)
    for names in by_title.values():
        for name in names if len(names) > 1 else []:
            schema = schemas[name]
            assert isinstance(schema, Schema)
            schema.title = "".join(
                part[:1].upper() + part[1:] for part in name.split("_") if part != "schemas"
            )


ADMIN_SCHEME = "adminToken"
"""The name of the admin bearer-token security scheme in the document."""


def document_admin_security(app: Litestar, guard: Callable[..., object]) -> None:
    """Declare the admin bearer token (``securitySchemes``) and require it on every operation ``guard``
    protects, so clients and generators send ``Authorization: Bearer <token>`` there."""
    document = app.openapi_schema
    document.components.security_schemes = {
        **(document.components.security_schemes or {}),
        ADMIN_SCHEME: SecurityScheme(
            type="http",
            scheme="bearer",
            description="The operator's GPUPLAN_ADMIN_TOKEN; writes are refused (403) when none is set",
        ),
    }
    paths = document.paths or {}
    for route in app.routes:
        item = paths.get(route.path)
        for handler in getattr(route, "route_handlers", []) if item is not None else []:
            if guard not in (handler.guards or []):
                continue
            for method in handler.http_methods:
                operation = getattr(item, method.lower(), None)
                if operation is not None:
                    operation.security = [{ADMIN_SCHEME: []}]


def document_raw_bodies(app: Litestar, uploads: Mapping[str, str]) -> None:
    """Declare the request body of each POST in ``uploads`` (path → description). They read the raw
    bytes (a CSV or JSON sheet, chosen by the ``format`` query), which Litestar leaves undocumented;
    without the body a generated client cannot send one."""
    paths = app.openapi_schema.paths or {}
    for path, description in uploads.items():
        operation = paths[path].post if path in paths else None
        if operation is not None:
            operation.request_body = RequestBody(
                description=description,
                required=True,
                content={
                    "text/csv": OpenAPIMediaType(schema=Schema(type=OpenAPIType.STRING)),
                    "application/json": OpenAPIMediaType(schema=Schema()),
                },
            )


def document_tagged_union(
    app: Litestar, path: str, name: str, members: Sequence[type[msgspec.Struct]], tag_field: str = "kind"
) -> None:
    """The request body of ``POST path`` as one component ``name``: ``oneOf`` its tagged members with a
    ``discriminator`` on ``tag_field`` (Litestar lists the members but names no discriminator)."""
    schemas = app.openapi_schema.components.schemas or {}
    prefix = "#/components/schemas/"
    mapping = {str(m.__struct_config__.tag): prefix + m.__name__ for m in members}
    schemas[name] = Schema(
        one_of=[Reference(ref=ref) for ref in mapping.values()],
        discriminator=Discriminator(property_name=tag_field, mapping=mapping),
        description=f"One of {', '.join(mapping)}, chosen by `{tag_field}`.",
    )
    app.openapi_schema.components.schemas = dict(sorted(schemas.items()))
    operation = app.openapi_schema.paths[path].post if app.openapi_schema.paths else None
    body = operation.request_body if operation is not None else None
    if isinstance(body, RequestBody):
        for media in body.content.values():
            media.schema = Reference(ref=prefix + name)

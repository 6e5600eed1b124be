"""Complete the generated OpenAPI document: the catalog's known values, zero bounds, stable names.

Filters such as ``provider`` or ``gpu`` only accept values the catalog knows (anything else is a 400
with close matches). Saying so in the schema lets clients and schema-driven tools (code generators,
fuzzers) send valid values. The lists are read when the app is built; values added later by a new
price sheet are accepted too, and appear in the schema after a restart.

Litestar names a component after its class, prefixed by the module path where two classes share a
name; :func:`keep_component_names` keeps the names clients know when such a class moves.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

import msgspec
from litestar import Litestar
from litestar.openapi.spec import Reference, Schema

from service.catalog.gpu_names import gpu_spellings
from service.db.snapshot import CatalogSnapshot

__all__ = ["document_body_enum", "document_known_values", "keep_component_names", "restore_body_zero_bounds"]


def _set_enum(schema: Schema | None, values: Iterable[str]) -> None:
    if schema is None:
        return
    options = schema.one_of or schema.any_of or []
    targets = [s for s in options if isinstance(s, Schema) and s.type == "string"] or [schema]
    for target in targets:
        target.enum = sorted(values, key=str.casefold)


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
            if getattr(parameter, "name", None) == name:
                _set_enum(getattr(parameter, "schema", None), values)
    _restore_zero_bounds(app)


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


def document_body_enum(app: Litestar, component_name: str, prop_name: str, values: Iterable[str]) -> None:
    """List the accepted values of one request-body property (e.g. ``ModelSpec.name``) in the schema."""
    component = (app.openapi_schema.components.schemas or {}).get(component_name)
    prop = component.properties.get(prop_name) if component is not None and component.properties else None
    if isinstance(prop, Schema):
        _set_enum(prop, values)


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

"""Read queries over the catalog (GPUs, offers, measured profiles), shared by the HTTP API and the CLI.

Each function validates its filters against the known values (a 400 naming the parameter when a value
is unknown or inconsistent) and answers with one set-based query and the total for pagination.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Sequence
from typing import Any, Final, Literal, Protocol

import msgspec

from service.catalog.gpu_names import resolve_gpu_names, resolve_slice
from service.catalog.schemas import (
    GpuOut,
    GpuPage,
    GpuSoftwareOut,
    MigSliceOut,
    OfferOut,
    OfferPage,
    ProfileOut,
    ProfilePage,
    ServingProfilePage,
)
from service.catalog.software_support import SOFTWARE_INDEX
from service.db.snapshot import CatalogSnapshot
from service.db.store import Store
from service.errors import InvalidParameter, NotFound
from solver import INTERCONNECT_RANK, REQUIREMENTS, GpuSpec, Network, NetworkClass, SliceSpec

__all__ = [
    "OFFER_SORTS",
    "GpuQuery",
    "OfferQuery",
    "ProfileQuery",
    "get_gpu",
    "list_gpus",
    "list_offers",
    "list_profiles",
    "list_serving_profiles",
]

OfferSort = Literal[
    "price_per_gpu_hour_usd",
    "-price_per_gpu_hour_usd",
    "price_per_hour_usd",
    "-price_per_hour_usd",
    "gpus_per_instance",
    "-gpus_per_instance",
    "provider",
    "-provider",
    "gpu",
    "-gpu",
]
OFFER_SORTS: Final[tuple[str, ...]] = typing.get_args(OfferSort)
_OFFER_SORT_SQL: Final = {
    "price_per_gpu_hour_usd": "price_per_hour_usd / gpus_per_instance",
    "price_per_hour_usd": "price_per_hour_usd",
    "gpus_per_instance": "gpus_per_instance",
    "provider": "provider",
    "gpu": "g.name",
}


class _Paged(Protocol):
    @property
    def limit(self) -> int: ...
    @property
    def offset(self) -> int: ...


class GpuQuery(msgspec.Struct, frozen=True, kw_only=True):
    vendor: str | None = None
    min_memory_gib: float | None = None
    nvlink: bool | None = None
    ecc: bool | None = None
    mig: bool = False
    """List MIG slices (each with its parent) instead of whole GPUs."""
    supports: str | None = None
    limit: int = 100
    offset: int = 0


class OfferQuery(msgspec.Struct, frozen=True, kw_only=True):
    gpu: str | None = None
    provider: str | None = None
    region: str | None = None
    min_gpus: int | None = None
    max_gpus: int | None = None
    max_price: float | None = None
    max_price_per_gpu: float | None = None
    interconnect: Literal["none", "pcie", "nvlink", "nvswitch"] | None = None
    network_class: NetworkClass | None = None
    min_network_gbps: float | None = None
    sort: OfferSort = "price_per_gpu_hour_usd"
    limit: int = 50
    offset: int = 0


class ProfileQuery(msgspec.Struct, frozen=True, kw_only=True):
    gpu: str | None = None
    model: str | None = None
    task: str | None = None
    metric: str | None = None
    precision: str | None = None
    gpu_count: int | None = None
    limit: int = 50
    offset: int = 0


def _known(value: str, known: frozenset[str], field: str, what: str) -> str:
    """The known spelling of ``value`` (case-insensitive), or a 400 with close matches."""
    for candidate in known:
        if candidate.casefold() == value.strip().casefold():
            return candidate
    close = difflib.get_close_matches(value, sorted(known), n=5, cutoff=0.4)
    hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(sorted(known)[:30])}"
    raise InvalidParameter(field, f"unknown {what} {value!r}{hint}", suggestions=close)


def _page_bounds(limit: int, offset: int) -> None:
    if not 1 <= limit <= 1000:
        raise InvalidParameter("limit", f"must be between 1 and 1000, got {limit}")
    if not 0 <= offset <= 1_000_000:
        raise InvalidParameter("offset", f"must be between 0 and 1000000, got {offset}")


_GPU_FIELDS: Final = GpuSpec.__struct_fields__


def _gpu_out(snapshot: CatalogSnapshot, gpu_id: str) -> GpuOut:
    gpu = snapshot.gpu_spec(gpu_id)
    fields = {name: getattr(gpu, name) for name in _GPU_FIELDS}
    fields["precisions"] = list(gpu.precisions)
    runs = snapshot.derive(SOFTWARE_INDEX).gpus[_whole_gpu_id(gpu)]
    software = GpuSoftwareOut(stack=runs.stack, architecture=runs.architecture, supports=list(runs.supports))
    if isinstance(gpu, SliceSpec):
        share = MigSliceOut(
            compute_fraction=gpu.compute_fraction,
            memory_fraction=gpu.memory_fraction,
            max_count=gpu.slices_per_gpu,
        )
        return GpuOut(
            **fields,
            aliases=[],
            software=software,
            parent_gpu_id=gpu.parent_gpu_id,
            mig_profile=gpu.mig_profile,
            mig=share,
        )
    slices = [s.gpu_id for s in snapshot.mig_slices.values() if s.parent_gpu_id == gpu_id]
    return GpuOut(
        **fields, aliases=snapshot.aliases_by_gpu.get(gpu_id, []), software=software, mig_slices=slices
    )


def _whole_gpu_id(gpu: GpuSpec) -> str:
    """The GPU a slice is cut from (its software is its parent's); a whole GPU's own id."""
    return gpu.parent_gpu_id if isinstance(gpu, SliceSpec) else gpu.gpu_id


def list_gpus(snapshot: CatalogSnapshot, query: GpuQuery) -> GpuPage:
    """The GPU catalog (or, with ``mig``, its MIG slices), filtered, in name order."""
    _page_bounds(query.limit, query.offset)
    gpus: list[GpuSpec] = list((snapshot.mig_slices if query.mig else snapshot.gpus).values())
    if query.vendor is not None:
        vendors = frozenset(g.vendor for g in snapshot.gpus.values())
        vendor = _known(query.vendor, vendors, "vendor", "vendor")
        gpus = [g for g in gpus if g.vendor == vendor]
    if query.min_memory_gib is not None:
        gpus = [g for g in gpus if g.memory_gib >= query.min_memory_gib]
    if query.nvlink is not None:
        gpus = [g for g in gpus if g.nvlink is query.nvlink]
    if query.ecc is not None:
        gpus = [g for g in gpus if g.ecc is query.ecc]
    if query.supports is not None:
        requirement = _known(query.supports, frozenset(REQUIREMENTS), "supports", "requirement")
        runs = snapshot.derive(SOFTWARE_INDEX).gpus
        gpus = [g for g in gpus if requirement in runs[_whole_gpu_id(g)].supports]
    gpus.sort(key=lambda g: g.name.casefold())
    window = gpus[query.offset : query.offset + query.limit]
    return GpuPage(
        items=[_gpu_out(snapshot, g.gpu_id) for g in window],
        total=len(gpus),
        limit=query.limit,
        offset=query.offset,
    )


def get_gpu(snapshot: CatalogSnapshot, id_or_alias: str) -> GpuOut:
    """One GPU (or MIG slice) by id, name or alias; 404 when unknown or when the name denotes several
    GPUs."""
    slice_id = resolve_slice(snapshot, id_or_alias)
    if slice_id is not None:
        return _gpu_out(snapshot, slice_id)
    try:
        found = resolve_gpu_names(snapshot, id_or_alias, field="gpu_id")
    except InvalidParameter as exc:
        raise NotFound(
            f"no GPU {id_or_alias!r} in the catalog", suggestions=exc.extra.get("suggestions", [])
        ) from None
    if len(found) > 1:
        raise NotFound(
            f"{id_or_alias!r} names several GPUs ({', '.join(found)}); ask for one of them",
            candidates=found,
        )
    return _gpu_out(snapshot, found[0])


def _offer_filters(store: Store, query: OfferQuery) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    snapshot = store.snapshot
    if query.gpu is not None:
        ids = resolve_gpu_names(snapshot, query.gpu)
        where.append(f"o.gpu_id IN ({', '.join('?' for _ in ids)})")
        params.extend(ids)
    if query.provider is not None:
        where.append("o.provider = ?")
        params.append(_known(query.provider, snapshot.providers, "provider", "provider"))
    if query.region is not None:
        where.append("o.region = ?")
        params.append(_known(query.region, snapshot.regions, "region", "region"))
    for count_field, count in (("min_gpus", query.min_gpus), ("max_gpus", query.max_gpus)):
        if count is not None and not 1 <= count <= 1024:
            raise InvalidParameter(count_field, f"must be between 1 and 1024, got {count}")
    if query.min_gpus is not None:
        where.append("o.gpus_per_instance >= ?")
        params.append(query.min_gpus)
    if query.max_gpus is not None:
        where.append("o.gpus_per_instance <= ?")
        params.append(query.max_gpus)
    prices: tuple[tuple[str, float | None, str], ...] = (
        ("max_price", query.max_price, "o.price_per_hour_usd"),
        ("max_price_per_gpu", query.max_price_per_gpu, "o.price_per_hour_usd / o.gpus_per_instance"),
    )
    for field, value, column in prices:
        if value is None:
            continue
        if not value > 0:
            raise InvalidParameter(field, f"must be a positive number of USD per hour, got {value}")
        where.append(f"{column} <= ?")
        params.append(value)
    if query.interconnect is not None:
        allowed = [
            name for name, rank in INTERCONNECT_RANK.items() if rank >= INTERCONNECT_RANK[query.interconnect]
        ]
        where.append(f"o.interconnect IN ({', '.join('?' for _ in allowed)})")
        params.extend(allowed)
    if query.network_class is not None:
        where.append("o.network_class = ?")
        params.append(query.network_class)
    if query.min_network_gbps is not None:
        if not query.min_network_gbps >= 0:
            raise InvalidParameter(
                "min_network_gbps", f"must be a number of Gbit/s >= 0, got {query.min_network_gbps}"
            )
        where.append("o.network_gbps >= ?")
        params.append(query.min_network_gbps)
    return where, params


_OFFER_SELECT: Final = """
    SELECT o.offer_id, o.provider, o.instance_type, o.region, o.gpu_id, g.name, o.gpu_name,
           o.gpus_per_instance, o.gpu_memory_gib, o.vcpus, o.host_memory_gib, o.interconnect,
           o.interconnect_derived, o.interconnect_rule,
           o.network_class, o.network_gbps, o.network_derived, o.network_rule, o.price_per_hour_usd,
           o.price_per_hour_usd / o.gpus_per_instance, o.spot_price_per_hour_usd, o.billing_increment_s,
           o.source, s.source, o.version, o.mig_profile, o.storage_read_gbps, count(*) OVER () AS total
    FROM current_offers o
    JOIN gpus g USING (gpu_id)
    JOIN price_sheets s ON s.version = o.version
"""
_OFFER_FIELDS: Final = tuple(OfferOut.__struct_fields__)
_NETWORK_AT: Final = _OFFER_FIELDS.index("network")


def _offer_out(row: Sequence[Any]) -> OfferOut:
    """An offer row of :data:`_OFFER_SELECT` (its four network columns folded into one value)."""
    head, network, tail = row[:_NETWORK_AT], row[_NETWORK_AT : _NETWORK_AT + 4], row[_NETWORK_AT + 4 : -1]
    fields = dict(zip(_OFFER_FIELDS, (*head, None, *tail), strict=True))
    fields["network"] = Network(
        network_class=network[0], gbps=float(network[1]), derived=bool(network[2]), rule=network[3]
    )
    return OfferOut(**fields)


def _page(
    store: Store,
    select: str,
    table: str,
    where: Sequence[str],
    params: Sequence[Any],
    order: str,
    page: _Paged,
) -> tuple[list[tuple[Any, ...]], int]:
    """One page of ``select`` (whose last column is ``count(*) OVER ()``) and the total of all pages;
    a page past the end counts the rows of ``table`` with one more query."""
    condition = f" WHERE {' AND '.join(where)}" if where else ""
    with store.cursor() as cur:
        rows = cur.execute(
            f"{select}{condition} ORDER BY {order} LIMIT ? OFFSET ?", [*params, page.limit, page.offset]
        ).fetchall()
        if rows:
            return rows, int(rows[0][-1])
        row = cur.execute(f"SELECT count(*) FROM {table}{condition}", list(params)).fetchone()
        return rows, int(row[0]) if row else 0


def list_offers(store: Store, query: OfferQuery) -> OfferPage:
    """Current offers, filtered, sorted (nulls last, then by offer id) and paginated."""
    _page_bounds(query.limit, query.offset)
    where, params = _offer_filters(store, query)
    if query.sort not in OFFER_SORTS:
        raise InvalidParameter("sort", f"must be one of {', '.join(OFFER_SORTS)}")
    descending = query.sort.startswith("-")
    order = f"{_OFFER_SORT_SQL[query.sort.lstrip('-')]} {'DESC' if descending else 'ASC'} NULLS LAST"
    rows, total = _page(
        store, _OFFER_SELECT, "current_offers o", where, params, f"{order}, o.offer_id", query
    )
    items = [_offer_out(row) for row in rows]
    return OfferPage(items=items, total=total, limit=query.limit, offset=query.offset)


_PROFILE_FIELDS: Final = tuple(ProfileOut.__struct_fields__)
_PROFILE_SELECT: Final = (
    "SELECT profile_id, gpu_id, gpu_name, gpu_count, interconnect, model, task, precision, batch_size, "
    "seq_len_or_resolution, metric, value, notes, source, dataset, count(*) OVER () "
    "FROM throughput_profiles"
)


def list_profiles(store: Store, query: ProfileQuery) -> ProfilePage:
    """Measured throughput rows, filtered (text filters match a known value, ignoring case)."""
    _page_bounds(query.limit, query.offset)
    snapshot = store.snapshot
    where: list[str] = []
    params: list[Any] = []
    if query.gpu is not None:
        ids = resolve_gpu_names(snapshot, query.gpu)
        where.append(f"gpu_id IN ({', '.join('?' for _ in ids)})")
        params.extend(ids)
    for field, value, known in (
        ("model", query.model, snapshot.profile_models),
        ("task", query.task, snapshot.profile_tasks),
        ("metric", query.metric, snapshot.profile_metrics),
        ("precision", query.precision, snapshot.profile_precisions),
    ):
        if value is not None:
            where.append(f"{field} = ?")
            params.append(_known(value, known, field, field))
    if query.gpu_count is not None:
        if not 1 <= query.gpu_count <= 1024:
            raise InvalidParameter("gpu_count", f"must be between 1 and 1024, got {query.gpu_count}")
        where.append("gpu_count = ?")
        params.append(query.gpu_count)
    rows, total = _page(store, _PROFILE_SELECT, "throughput_profiles", where, params, "profile_id", query)
    items = [ProfileOut(**dict(zip(_PROFILE_FIELDS, row[:-1], strict=True))) for row in rows]
    return ProfilePage(items=items, total=total, limit=query.limit, offset=query.offset)


def list_serving_profiles(
    snapshot: CatalogSnapshot, *, gpu: str | None, limit: int, offset: int
) -> ServingProfilePage:
    """Serving-capacity rows of the snapshot, optionally of the GPUs ``gpu`` can denote."""
    rows = list(snapshot.serving)
    if gpu is not None:
        ids = set(resolve_gpu_names(snapshot, gpu))
        rows = [r for r in rows if r.gpu_id in ids]
    return ServingProfilePage(
        items=rows[offset : offset + limit], total=len(rows), limit=limit, offset=offset
    )

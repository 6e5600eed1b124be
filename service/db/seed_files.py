"""Read the data files shipped in ``service/data`` into Structs (no database involved).

Every reader returns what it could use and a ``SheetProblem`` for every row it could not, so nothing
is dropped silently. Attribution for each file is in ``service/data/README*.md``.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from importlib import resources

import msgspec

from pricing import (
    AliasRule,
    AliasTable,
    NameContext,
    OwnershipDefault,
    OwnershipPrice,
    ParsedOffers,
    ParsedProviderCosts,
    SheetProblem,
    UnresolvedGpuName,
    parse_cloud_price_rows,
    parse_provider_costs,
)
from solver import FORMATS, Format, GpuSpec, MeasuredProfile, ServingProfile, gpu_id_for

__all__ = [
    "SEED_FILES",
    "Parsed",
    "SeedCatalog",
    "read_seed_catalog",
    "seed_file_text",
]

SPECS_FILE = "gpu_specs.csv"
ALIASES_FILE = "gpu_aliases.csv"
PRICES_FILE = "cloud_gpu_prices.csv"
PROFILE_FILES = ("throughput_profiles.csv", "throughput_mlperf_inference.csv", "throughput_training_llm.csv")
SERVING_FILE = "serving_profiles_melange.csv"
OWNERSHIP_PRICES_FILE = "ownership_prices.csv"
OWNERSHIP_DEFAULTS_FILE = "ownership_defaults.csv"
PROVIDER_COSTS_FILE = "provider_costs.csv"
SEED_FILES = (
    SPECS_FILE,
    ALIASES_FILE,
    PRICES_FILE,
    *PROFILE_FILES,
    SERVING_FILE,
    OWNERSHIP_PRICES_FILE,
    OWNERSHIP_DEFAULTS_FILE,
    PROVIDER_COSTS_FILE,
)


class Parsed[T](msgspec.Struct, frozen=True, kw_only=True):
    """Rows read from one kind of file, and the rows that could not be used."""

    items: list[T]
    problems: list[SheetProblem]


class SeedCatalog(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the shipped files hold, parsed and resolved."""

    gpus: list[GpuSpec]
    aliases: list[AliasRule]
    offers: ParsedOffers
    profiles: Parsed[MeasuredProfile]
    serving: Parsed[ServingProfile]
    ownership_prices: Parsed[OwnershipPrice]
    ownership_defaults: Parsed[OwnershipDefault]
    provider_costs: ParsedProviderCosts

    @property
    def problems(self) -> list[SheetProblem]:
        return [
            *self.offers.problems,
            *self.profiles.problems,
            *self.serving.problems,
            *self.ownership_prices.problems,
            *self.ownership_defaults.problems,
            *self.provider_costs.problems,
        ]


def seed_file_text(name: str) -> str:
    """The text of one shipped data file."""
    return resources.files("service").joinpath("data", name).read_text(encoding="utf-8")


def _rows(name: str) -> Iterator[tuple[int, dict[str, str]]]:
    yield from enumerate(csv.DictReader(io.StringIO(seed_file_text(name))), start=2)


class _RowError(Exception):
    def __init__(self, column: str, reason: str) -> None:
        super().__init__(reason)
        self.column = column
        self.reason = reason


def _float(row: dict[str, str], column: str, *, required: bool = False) -> float | None:
    text = (row.get(column) or "").strip()
    if not text:
        if required:
            raise _RowError(column, "empty")
        return None
    try:
        value = float(text)
    except ValueError:
        raise _RowError(column, f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise _RowError(column, f"not a finite number: {text!r}")
    return value


def _int(row: dict[str, str], column: str) -> int | None:
    value = _float(row, column)
    if value is None:
        return None
    if value != int(value):
        raise _RowError(column, f"not a whole number: {row[column]!r}")
    return int(value)


def _yes_no(text: str) -> bool | None:
    return {"yes": True, "no": False}.get(text.strip().casefold())


def _text(row: dict[str, str], column: str) -> str:
    text = (row.get(column) or "").strip()
    if not text:
        raise _RowError(column, "empty")
    return text


def _formats(row: dict[str, str]) -> tuple[Format, ...]:
    found: list[Format] = []
    for word in _text(row, "precisions").split():
        known = next((f for f in FORMATS if f == word), None)
        if known is None:
            raise _RowError("precisions", f"{word!r} is not one of {', '.join(FORMATS)}")
        found.append(known)
    return tuple(found)


def read_gpu_specs() -> list[GpuSpec]:
    """The GPU catalog; a bad row here is a packaging error, so it raises (naming the line and column)."""
    gpus = []
    for line, row in _rows(SPECS_FILE):
        try:
            gpus.append(_gpu_spec(row))
        except _RowError as exc:
            raise ValueError(f"{SPECS_FILE} line {line}, column {exc.column}: {exc.reason}") from None
        except ValueError as exc:
            raise ValueError(f"{SPECS_FILE} line {line}: {exc}") from None
    return gpus


def _gpu_spec(row: dict[str, str]) -> GpuSpec:
    nvlink_domain = _int(row, "nvlink_domain")
    if nvlink_domain is None:
        raise _RowError("nvlink_domain", "empty")
    return GpuSpec(
        gpu_id=gpu_id_for(row["gpu"]),
        name=row["gpu"].strip(),
        vendor=row["vendor"].strip(),
        architecture=_text(row, "architecture"),
        family=_text(row, "family"),
        nvlink_domain=nvlink_domain,
        precisions=_formats(row),
        memory_gib=float(row["memory_gib"]),
        memory_type=row["memory_type"].strip() or None,
        memory_bandwidth_tbps=_float(row, "memory_bandwidth_tbps"),
        bf16_tflops=_float(row, "bf16_dense_tflops"),
        fp16_tflops=_float(row, "fp16_dense_tflops"),
        tdp_w=_float(row, "tdp_w"),
        nvlink=_yes_no(row["nvlink"]),
        nvlink_bandwidth_gbps=_float(row, "nvlink_bandwidth_gbps"),
        ecc=_yes_no(row["ecc"]),
        mig_max_instances=_int(row, "mig_max_instances"),
        form_factor=row["form_factor"].strip() or None,
        launch_msrp_usd=_float(row, "launch_msrp_usd"),
        source=row["source"].strip(),
    )


def read_alias_rules() -> list[AliasRule]:
    """The alias table as shipped."""
    return [
        AliasRule(
            alias=row["alias"].strip(),
            canonical_gpu=row["canonical_gpu"].strip(),
            context=row["context"].strip(),
            evidence=row["evidence"].strip(),
        )
        for _, row in _rows(ALIASES_FILE)
    ]


def _resolve(aliases: AliasTable, name: str, context: NameContext, known: set[str]) -> str:
    try:
        canonical = aliases.resolve(name, context)
    except UnresolvedGpuName as exc:
        raise _RowError("gpu", exc.reason) from None
    gpu_id = gpu_id_for(canonical)
    if gpu_id not in known:
        raise _RowError("gpu", f"alias points at {canonical!r}, which is not in the GPU catalog")
    return gpu_id


def _problem(file: str, line: int, row: dict[str, str], exc: _RowError) -> SheetProblem:
    return SheetProblem(file=file, line=line, column=exc.column, value=row.get(exc.column), reason=exc.reason)


def read_measured_profiles(aliases: AliasTable, known: set[str]) -> Parsed[MeasuredProfile]:
    """Training and inference throughput rows of both shipped profile files."""
    items: list[MeasuredProfile] = []
    problems: list[SheetProblem] = []
    for file in PROFILE_FILES:
        for line, row in _rows(file):
            try:
                gpu_id = _resolve(aliases, row["gpu"], NameContext(file=file), known)
                count = _int(row, "gpu_count")
                value = _float(row, "value", required=True)
                if count is None or count < 1:
                    raise _RowError("gpu_count", "must be a whole number >= 1")
                if value is None or value <= 0:
                    raise _RowError("value", "must be positive")
                items.append(
                    MeasuredProfile(
                        profile_id=len(items) + 1,
                        gpu_id=gpu_id,
                        gpu_count=count,
                        interconnect=row["interconnect"].strip(),
                        model=row["model"].strip(),
                        task=row["task"].strip(),
                        precision=row["precision"].strip(),
                        batch_size=_int(row, "batch_size"),
                        seq_len_or_resolution=row["seq_len_or_resolution"].strip() or None,
                        metric=row["metric"].strip(),
                        value=value,
                        notes=row["notes"].strip(),
                        source=row["source"].strip(),
                        dataset=file.removesuffix(".csv"),
                    )
                )
            except _RowError as exc:
                problems.append(_problem(file, line, row, exc))
    return Parsed(items=items, problems=problems)


def read_serving_profiles(aliases: AliasTable, known: set[str]) -> Parsed[ServingProfile]:
    """Mélange serving-capacity rows; rows outside the labelled 6×6 grid have no bucket edges."""
    items: list[ServingProfile] = []
    problems: list[SheetProblem] = []
    for line, row in _rows(SERVING_FILE):
        try:
            gpu_id = _resolve(aliases, row["gpu"], NameContext(file=SERVING_FILE), known)
            edges = [
                _int(row, c)
                for c in (
                    "input_len_lo_excl",
                    "input_len_hi_incl",
                    "output_len_lo_excl",
                    "output_len_hi_incl",
                )
            ]
            if row["in_6x6_grid"].strip() != "true" or any(e is None for e in edges):
                raise _RowError("in_6x6_grid", "outside the source's labelled 6x6 grid: bucket edges unknown")
            in_lo, in_hi, out_lo, out_hi = (int(e or 0) for e in edges)
            rate = _float(row, "max_throughput_req_per_s", required=True)
            if rate is None or rate <= 0:
                raise _RowError("max_throughput_req_per_s", "must be positive")
            items.append(
                ServingProfile(
                    serving_id=len(items) + 1,
                    model=row["model"].strip(),
                    gpu_id=gpu_id,
                    tp=1,
                    input_len_lo_excl=in_lo,
                    input_len_hi_incl=in_hi,
                    output_len_lo_excl=out_lo,
                    output_len_hi_incl=out_hi,
                    max_requests_per_s=rate,
                    slo=None,
                    hourly_cost_usd=_float(row, "hourly_cost_usd"),
                    in_grid=True,
                    source=f"litone01/melange-release:{row['source_path'].strip()}@{row['source_commit'].strip()}",
                )
            )
        except _RowError as exc:
            problems.append(_problem(SERVING_FILE, line, row, exc))
    return Parsed(items=items, problems=problems)


def read_ownership_prices(aliases: AliasTable, known: set[str]) -> Parsed[OwnershipPrice]:
    """Sourced purchase prices; rows without a price are reported, not used."""
    items: list[OwnershipPrice] = []
    problems: list[SheetProblem] = []
    file = OWNERSHIP_PRICES_FILE
    for line, row in _rows(file):
        try:
            gpu_id = _resolve(aliases, row["gpu"], NameContext(file=file), known)
            price = _float(row, "purchase_price_usd")
            if price is None or price <= 0:
                raise _RowError("purchase_price_usd", "no purchase price in the source row")
            items.append(
                OwnershipPrice(
                    gpu_id=gpu_id,
                    gpu_name=row["gpu"].strip(),
                    vendor=row["vendor"].strip(),
                    purchase_price_usd=price,
                    price_basis=row["price_basis"].strip(),
                    price_date=row["price_date"].strip(),
                    server_overhead_factor=_float(row, "server_overhead_factor"),
                    system_power_w_per_gpu=_float(row, "system_power_w_per_gpu"),
                    gpu_tdp_w=_float(row, "gpu_tdp_w"),
                    source=row["source"].strip(),
                    source_url=row["source_url_or_path"].strip(),
                    confidence=row["confidence"].strip(),
                    notes=row["notes"].strip(),
                )
            )
        except _RowError as exc:
            problems.append(_problem(file, line, row, exc))
    return Parsed(items=items, problems=problems)


def read_ownership_defaults() -> Parsed[OwnershipDefault]:
    """Sourced finance defaults, one row per (parameter, date)."""
    items: list[OwnershipDefault] = []
    problems: list[SheetProblem] = []
    file = OWNERSHIP_DEFAULTS_FILE
    for line, row in _rows(file):
        try:
            value = _float(row, "value", required=True)
            items.append(
                OwnershipDefault(
                    parameter=row["parameter"].strip(),
                    value=float(value or 0.0),
                    unit=row["unit"].strip(),
                    source=row["source"].strip(),
                    date=row["date"].strip(),
                    confidence=row["confidence"].strip(),
                    notes=row["notes"].strip(),
                )
            )
        except _RowError as exc:
            problems.append(_problem(file, line, row, exc))
    return Parsed(items=items, problems=problems)


def read_seed_catalog() -> SeedCatalog:
    """Parse every shipped file, resolving every GPU name through the alias table."""
    gpus = read_gpu_specs()
    rules = read_alias_rules()
    aliases = AliasTable(rules)
    by_id = {g.gpu_id: g for g in gpus}
    known = set(by_id)
    offers = parse_cloud_price_rows(
        (row for _, row in _rows(PRICES_FILE)), file=PRICES_FILE, aliases=aliases, gpus=by_id
    )
    return SeedCatalog(
        gpus=gpus,
        aliases=rules,
        offers=offers,
        profiles=read_measured_profiles(aliases, known),
        serving=read_serving_profiles(aliases, known),
        ownership_prices=read_ownership_prices(aliases, known),
        ownership_defaults=read_ownership_defaults(),
        provider_costs=parse_provider_costs(_rows(PROVIDER_COSTS_FILE), PROVIDER_COSTS_FILE),
    )

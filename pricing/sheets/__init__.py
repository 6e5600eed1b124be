"""Reading price sheets: cells and rows, the sheet formats, rental offers, provider costs, ownership rows.

The face of ``pricing.sheets``: every public name of its modules."""

from pricing.sheets.cloud_prices import CLOUD_PRICE_COLUMNS, parse_cloud_price_rows
from pricing.sheets.context import SheetContext
from pricing.sheets.formats import (
    FORMATS,
    SHEET_FORMATS,
    ParsedPrices,
    ParsedSheet,
    SheetFormat,
    SheetFormatSpec,
    SheetKind,
)
from pricing.sheets.json_depth import MAX_JSON_DEPTH, json_depth, json_depth_exceeds
from pricing.sheets.offer_build import StatedOffer, build_offer, mig_profile_of, resolve_gpu
from pricing.sheets.offers import (
    DEFAULT_BILLING_INCREMENT_S,
    ParsedOffers,
    RentalOffer,
    RowCollector,
    SheetProblem,
    collect_offers,
    collect_rows,
    offer_collector,
    offer_id_for,
)
from pricing.sheets.ownership_rows import OwnershipDefault, OwnershipPrice
from pricing.sheets.provider_costs import (
    CLASS_DEFAULT,
    COST_FIELDS,
    OWNED_PROVIDER,
    PROVIDER_CLASSES,
    ParsedProviderCosts,
    ProviderClass,
    ProviderCost,
    ProviderCosts,
    ResolvedCost,
    parse_provider_costs,
    terms_of,
)
from pricing.sheets.rental import MAX_GPUS_PER_INSTANCE, RENTAL_COLUMNS, parse_rental, parse_row
from pricing.sheets.sheet_rows import CURL_HINT, SheetRows, SheetTable, read_columns, read_table

__all__ = [
    "CLASS_DEFAULT",
    "CLOUD_PRICE_COLUMNS",
    "COST_FIELDS",
    "CURL_HINT",
    "DEFAULT_BILLING_INCREMENT_S",
    "FORMATS",
    "MAX_GPUS_PER_INSTANCE",
    "MAX_JSON_DEPTH",
    "OWNED_PROVIDER",
    "PROVIDER_CLASSES",
    "RENTAL_COLUMNS",
    "SHEET_FORMATS",
    "OwnershipDefault",
    "OwnershipPrice",
    "ParsedOffers",
    "ParsedPrices",
    "ParsedProviderCosts",
    "ParsedSheet",
    "ProviderClass",
    "ProviderCost",
    "ProviderCosts",
    "RentalOffer",
    "ResolvedCost",
    "RowCollector",
    "SheetContext",
    "SheetFormat",
    "SheetFormatSpec",
    "SheetKind",
    "SheetProblem",
    "SheetRows",
    "SheetTable",
    "StatedOffer",
    "build_offer",
    "collect_offers",
    "collect_rows",
    "json_depth",
    "json_depth_exceeds",
    "mig_profile_of",
    "offer_collector",
    "offer_id_for",
    "parse_cloud_price_rows",
    "parse_provider_costs",
    "parse_rental",
    "parse_row",
    "read_columns",
    "read_table",
    "resolve_gpu",
    "terms_of",
]

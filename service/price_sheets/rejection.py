"""A rejected sheet (price sheet or serving profiles) is answered as an RFC 9457 problem, as every
other error is: ``application/problem+json`` whose ``detail`` names what is wrong, extended with the
import report (every problem with its line and column) so a client reads one shape for both."""

from __future__ import annotations

import msgspec
from litestar.openapi.datastructures import ResponseSpec
from litestar.status_codes import HTTP_422_UNPROCESSABLE_ENTITY

from pricing import SheetProblem
from service.catalog.schemas import ProfileUploadReport
from service.errors import ServiceError
from service.price_sheets.schemas import SheetReport
from service.problems import PROBLEM_JSON

__all__ = [
    "ProfileRejection",
    "SheetRejected",
    "SheetRejection",
    "rejection_detail",
    "rejection_spec",
]


class SheetRejection(SheetReport, kw_only=True):
    """A rejected price sheet: the problem members and the import report."""

    type: str
    title: str
    status: int
    detail: str
    instance: str


class ProfileRejection(ProfileUploadReport, kw_only=True):
    """A rejected serving-profile upload: the problem members and the upload report."""

    type: str
    title: str
    status: int
    detail: str
    instance: str


def rejection_detail(problems: list[SheetProblem]) -> str:
    """One sentence: what is wrong with the whole sheet, or how many lines are wrong and the first."""
    if not problems:
        return "the sheet was rejected"
    first = problems[0]
    if first.line == 0:
        return f"{first.file}: {first.reason}"
    lines = len({p.line for p in problems})
    where = f"line {first.line}" + (f", column {first.column}" if first.column else "")
    return (
        f"{first.file}: {len(problems)} problem(s) on {lines} line(s); nothing was imported. "
        f"First: {where}: {first.reason}"
    )


class SheetRejected(ServiceError):
    """A sheet with any problem: 422, the report's members added to the problem."""

    status_code = HTTP_422_UNPROCESSABLE_ENTITY
    title = "Sheet rejected"

    def __init__(self, report: SheetReport | ProfileUploadReport) -> None:
        super().__init__(rejection_detail(report.problems), **msgspec.to_builtins(report))
        self.report = report


def rejection_spec(body: type[SheetRejection | ProfileRejection]) -> dict[int, ResponseSpec]:
    """The OpenAPI entry of the 422 answer of an upload route."""
    description = "The sheet was rejected (nothing changed): every problem with its line and column"
    return {
        HTTP_422_UNPROCESSABLE_ENTITY: ResponseSpec(
            data_container=body, description=description, media_type=PROBLEM_JSON, generate_examples=False
        )
    }

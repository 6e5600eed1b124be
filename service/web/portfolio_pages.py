"""The portfolio pages: ``/portfolio`` (a form holding a POST /v1/portfolios body, an example filled in),
whose POST plans and stores the portfolio through the plan queue and opens ``/portfolios/{id}``: the
schedule as a Gantt chart, owned against rented GPUs per bucket as a stacked chart, the tables behind
them and the downloads (JSON, CSV)."""

from __future__ import annotations

import base64
import io
import json
from typing import Annotated, Any, Final

import msgspec
from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import PathParameter
from litestar.response import Redirect
from matplotlib.figure import Figure

from service.buy_vs_rent.formats import chart_lock
from service.errors import Overloaded, ServiceError
from service.plans.admission import PlanQueue
from service.portfolios.logic import PortfolioService
from service.portfolios.schemas import JobOut, PortfolioOut, PortfolioRequest
from service.web.render import page
from solver import InfeasiblePortfolio, SolverError

__all__ = ["EXAMPLE", "PORTFOLIO_PAGES", "gantt_svg", "owned_rented_svg"]

PortfolioId = Annotated[str, PathParameter(description="A stored portfolio's id", max_length=64)]
_PAGE: Final[dict[str, Any]] = {"include_in_schema": False, "sync_to_thread": True}

EXAMPLE: Final = {
    "horizon": {"start": "2027-01-04", "buckets": 13, "bucket": "week"},
    "jobs": [
        {"name": "lora-support", "plan": {"kind": "fine_tune", "model": {"name": "Llama 3.1 8B"}, "method": "lora",
         "batch_size": 4, "seq_len": 2048, "recompute": "selective", "tokens": 2000000000}, "deadline": "2027-01-17"},
        {"name": "pretrain-1b", "plan": {"kind": "train", "model": {"name": "Llama 3.2 1B"}, "batch_size": 8,
         "seq_len": 2048, "tokens": 50000000000}, "earliest_start": "2027-01-11", "deadline": "2027-01-31"},
    ],
    "owned": [{"gpu": "H100 SXM", "count": 8}],
}  # fmt: skip
"""The form's starting body: two jobs against 8 owned H100 over a quarter of weeks."""


def _palette(n: int) -> list[str]:
    colours = ["#1f5fbf", "#2ca02c", "#9467bd", "#17becf", "#8c564b", "#bcbd22"]
    return [colours[i % len(colours)] for i in range(n)]


def _label(job: JobOut) -> str:
    where = "owned" if job.source == "own" else job.provider or "rented"
    stages = f", {len(job.stages)} stages: " + " + ".join(f"{st.share:.0%}" for st in job.stages)
    return f"{job.gpu_count}× {job.gpu} ({where}{stages if job.split else ''})"


def gantt_svg(out: PortfolioOut) -> bytes:
    """One bar per job from its start to its end (hours from the horizon's start) — a split job one bar
    per stage, its share of the work in the label — owned solid and rented hatched, labelled with its
    GPUs; bucket boundaries as grid lines."""
    jobs = out.jobs
    with chart_lock():
        figure = Figure(figsize=(9, 0.9 + 0.38 * max(len(jobs), 2)), dpi=100)
        axes = figure.add_subplot()
        for row, job in enumerate(jobs):
            owned = job.source == "own"
            axes.barh([row] * len(job.stages), [st.end_hour - st.start_hour for st in job.stages],
                      left=[st.start_hour for st in job.stages], height=0.6, color="#1f5fbf" if owned else "#f28e2b",
                      hatch=None if owned else "//", edgecolor="#333")  # fmt: skip
            axes.annotate(
                _label(job), (job.end_hour, row), xytext=(4, -3), textcoords="offset points", fontsize=7
            )
        axes.set_yticks(range(len(jobs)), [j.job for j in jobs], fontsize=8)
        axes.invert_yaxis()
        horizon = out.horizon.buckets * out.bucket_hours
        axes.set_xlim(0, horizon * 1.15)
        axes.set_xticks([b * out.bucket_hours for b in range(out.horizon.buckets + 1)], minor=False)
        axes.set_xticklabels([str(b) for b in range(out.horizon.buckets + 1)], fontsize=7)
        axes.set_xlabel(
            f"{out.horizon.bucket} from {out.horizon.start} (blue: owned GPUs, hatched orange: rented)"
        )
        axes.grid(True, axis="x", linewidth=0.3)
        axes.set_title("Schedule")
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def owned_rented_svg(out: PortfolioOut) -> bytes:
    """GPUs held per bucket: owned ones busy (stacked by type) under rented ones, the owned count as a step."""
    buckets = [b.bucket for b in out.buckets]
    types = sorted({g for b in out.buckets for g in b.owned_gpus})
    with chart_lock():
        figure = Figure(figsize=(9, 4), dpi=100)
        axes = figure.add_subplot()
        bottom = [0.0] * len(buckets)
        for gpu, colour in zip(types, _palette(len(types)), strict=True):
            busy = [float(b.owned_busy_gpus.get(gpu, 0)) for b in out.buckets]
            axes.bar(buckets, busy, bottom=bottom, color=colour, label=f"owned {gpu}, busy")
            bottom = [a + b for a, b in zip(bottom, busy, strict=True)]
        axes.bar(buckets, [float(b.rented_gpus) for b in out.buckets], bottom=bottom, color="#f28e2b",
                 hatch="//", edgecolor="#333", label="rented")  # fmt: skip
        owned = [float(sum(b.owned_gpus.values())) for b in out.buckets]
        if any(owned):
            axes.step(buckets, owned, where="mid", color="#333", linewidth=1, label="owned GPUs")
        axes.set_xticks(buckets, [str(b) for b in buckets], fontsize=7)
        axes.set_xlabel(f"{out.horizon.bucket} from {out.horizon.start}")
        axes.set_ylabel("GPUs held")
        axes.set_title("Owned vs rented GPUs per bucket")
        axes.grid(True, axis="y", linewidth=0.3)
        axes.legend(loc="upper right", fontsize=8)
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _data_uri(svg: bytes) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


@get("/portfolio", include_in_schema=False, sync_to_thread=False)
def portfolio_form_page() -> Response[str]:
    """The form, with an example portfolio to edit."""
    return page("portfolio.html", body=json.dumps(EXAMPLE, indent=2), error=None, infeasible=[])


def _request_of(text: str) -> PortfolioRequest:
    try:
        return msgspec.json.decode(text.encode(), type=PortfolioRequest, strict=True)
    except msgspec.DecodeError as exc:
        raise ValueError(str(exc)) from exc


@post("/portfolio", include_in_schema=False)
async def save_portfolio_page(
    portfolios: NamedDependency[PortfolioService],
    plan_queue: NamedDependency[PlanQueue],
    request: Request[Any, Any, Any],
) -> Response[str]:
    """Plan and store the form's portfolio: 303 to ``/portfolios/{id}``, or the form with the error."""
    form = await request.form()
    text = str(form.get("body", ""))
    try:
        body = _request_of(text)
        out = await plan_queue.run(lambda: portfolios.create(body))
    except InfeasiblePortfolio as exc:
        return page("portfolio.html", status_code=422, body=text, error=str(exc), infeasible=exc.jobs)
    except (ValueError, Overloaded, ServiceError, SolverError) as exc:
        detail = exc.detail if isinstance(exc, ServiceError) else str(exc)
        return page("portfolio.html", status_code=400, body=text, error=detail, infeasible=[])
    return Redirect(f"/portfolios/{out.portfolio_id}", status_code=303)


@get("/portfolios/{portfolio_id:str}", **_PAGE)
def stored_portfolio_page(
    portfolios: NamedDependency[PortfolioService], portfolio_id: PortfolioId
) -> Response[str]:
    """A stored portfolio: headline figures, the Gantt and owned-vs-rented charts, the tables, downloads."""
    try:
        out = portfolios.get(portfolio_id)
    except ServiceError as exc:
        return page("not_found.html", status_code=404, what=exc.detail)
    return page(
        "stored_portfolio.html",
        p=out,
        gantt=_data_uri(gantt_svg(out)),
        stacked=_data_uri(owned_rented_svg(out)),
    )


PORTFOLIO_PAGES: Final[tuple[HTTPRouteHandler, ...]] = (
    portfolio_form_page,
    save_portfolio_page,
    stored_portfolio_page,
)

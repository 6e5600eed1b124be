"""``gpuplan plans launch ID --format skypilot|kubernetes``: a stored plan's launch file (as GET
/v1/plans/{plan_id}/launch), on the database or through a running server."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from service.db.store import Store
from service.launch.export import launch_file
from service.launch.manifests import FORMATS
from service.plans.pipeline import PlanService
from service.server.client import add_target_options, reach

__all__ = ["register"]


def _cmd_launch(args: argparse.Namespace) -> int:
    with reach(args) as where:
        if isinstance(where, Store):
            text = launch_file(PlanService(where), args.plan_id, args.format, args.replica_type)
        else:
            params = {"format": args.format}
            if args.replica_type is not None:
                params["replica_type"] = str(args.replica_type)
            _, body = where.exchange("GET", f"/v1/plans/{args.plan_id}/launch", params=params, accept=(200,))
            text = body.decode()
    sys.stdout.write(text)
    return 0


def register(sub: Any) -> None:
    """Add ``launch`` to the ``plans`` command's subparsers."""
    parser = sub.add_parser("launch", help="a stored plan as a SkyPilot task or Kubernetes manifests (YAML)")
    parser.add_argument("plan_id", help="the id POST /v1/plans returned")
    parser.add_argument("--format", choices=FORMATS, required=True, help="skypilot or kubernetes")
    parser.add_argument(
        "--replica-type", type=int, default=None, help="serving: the replica type (index in choice.replicas)"
    )
    add_target_options(parser)
    parser.set_defaults(func=_cmd_launch)

"""A stored plan's launch file in one call, for the route, the CLI and the plan page alike."""

from __future__ import annotations

from typing import Final

from service.launch.errors import CannotLaunch
from service.launch.manifests import LaunchFormat, kubernetes_manifests, skypilot_task
from service.launch.targets import launch_groups
from service.plans.pipeline import PlanService

__all__ = ["YAML_MEDIA_TYPE", "launch_file"]

YAML_MEDIA_TYPE: Final = "application/yaml"
"""RFC 9512's media type for YAML."""


def launch_file(plans: PlanService, plan_id: str, fmt: LaunchFormat, replica_type: int | None = None) -> str:
    """The plan ``plan_id`` as ``fmt`` (404 when there is no such plan, 422 naming the field when the
    launcher cannot express it)."""
    request, plan = plans.stored(plan_id)
    groups = launch_groups(plans.store.snapshot, request, plan, replica_type)
    if fmt == "kubernetes":
        return kubernetes_manifests(groups, plan_id)
    if len(groups) > 1:
        raise CannotLaunch(
            "replica_type",
            f"the fleet mixes {len(groups)} replica types and a SkyPilot task runs one: "
            f"ask for replica_type 0 to {len(groups) - 1}",
        )
    return skypilot_task(groups[0], plan_id)

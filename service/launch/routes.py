"""GET /v1/plans/{plan_id}/launch: a stored plan as a SkyPilot task YAML or Kubernetes manifests."""

from __future__ import annotations

from typing import Annotated, Any, Final

from litestar import Response
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import PathParameter, QueryParameter

from service.launch.export import YAML_MEDIA_TYPE, launch_file
from service.launch.manifests import LaunchFormat
from service.plans.pipeline import PlanService
from service.problems import FeatureRoutes

__all__ = ["ROUTES"]

_API = FeatureRoutes("plans")


@_API.get(
    "/plans/{plan_id:str}/launch",
    operation_id="launchPlan",
    problems=(404, 422),
    media_type=YAML_MEDIA_TYPE,
    responses={
        200: ResponseSpec(
            data_container=dict[str, Any],
            media_type=YAML_MEDIA_TYPE,
            description="One YAML document, a mapping: the SkyPilot task, or a Kubernetes v1 List of the "
            "resources (kubectl apply -f takes it)",
            generate_examples=False,
        )
    },
)
def launch_plan_handler(
    plans: NamedDependency[PlanService],
    plan_id: Annotated[str, PathParameter(description="The id POST /v1/plans returned", max_length=100)],
    format: Annotated[
        LaunchFormat,
        QueryParameter(
            description="skypilot: a SkyPilot task YAML (a SkyServe service for a serving fleet); kubernetes: "
            "a Job (a JobSet on several nodes) or, for serving, a Deployment and Service per replica type"
        ),
    ],
    replica_type: Annotated[
        int | None,
        QueryParameter(
            description="Serving: the replica type to launch (its index in choice.replicas); SkyPilot needs "
            "it when the fleet mixes types",
            ge=0,
            le=1000,
        ),
    ] = None,
) -> Response[str]:
    """The launcher's file for a stored plan: its GPUs, nodes, seller, spot or not and disk, and the
    stack's command with the plan's layout (torchtitan through torchrun; vllm serve)."""
    text = launch_file(plans, plan_id, format, replica_type)
    return Response(
        content=text,
        media_type=YAML_MEDIA_TYPE,
        headers={"Content-Disposition": f'inline; filename="{plan_id}-{format}.yaml"'},
    )


ROUTES: Final[tuple[HTTPRouteHandler, ...]] = (launch_plan_handler,)
"""The launch handler."""

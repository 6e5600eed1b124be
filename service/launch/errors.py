"""The launch package's errors: a stored plan the launchers cannot express (a 422 naming the field)."""

from __future__ import annotations

from typing import ClassVar

from service.errors import ServiceError

__all__ = ["CannotLaunch"]


class CannotLaunch(ServiceError):
    """The plan is valid but this export cannot run it; ``field`` names what to change."""

    status_code: ClassVar[int] = 422
    title: ClassVar[str] = "Cannot launch this plan"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}", field=field, errors=[{"field": field, "message": message}])
        self.field = field

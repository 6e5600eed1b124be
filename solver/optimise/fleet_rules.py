"""What a practitioner asks of a serving fleet beyond its cost: redundancy.

One replica has none: a crash, a driver update or a host reboot takes the service down. Two rules
say how much a fleet keeps:

- ``min_replicas``: the fleet runs at least this many replicas in all (over every type).
- ``spare_instance``: every replica type in the fleet keeps one instance spare, so that losing any one
  instance (the largest unit that fails at once: a host, with all its replicas) leaves capacity that
  still serves the load at ``max_utilization``. It is asked per type (N+1 for each pool of one
  type), the rule a load balancer with one pool per type needs; for a one-type fleet it is exactly
  "survive the loss of one instance", for a mix it is the conservative form (no type relies on
  another to take over its share).
"""

from __future__ import annotations

import msgspec

__all__ = ["NO_RULES", "FleetRules"]


class FleetRules(msgspec.Struct, frozen=True, kw_only=True):
    """Redundancy a fleet must keep (module docstring); the defaults ask for none."""

    min_replicas: int = 1
    spare_instance: bool = False

    def fewest(self, carrying: int, replicas_per_instance: int) -> int:
        """Instances of a type alone in the fleet, given the ``carrying`` instances its load needs."""
        with_spare = carrying + 1 if self.spare_instance and carrying > 0 else carrying
        return max(with_spare, -(-self.min_replicas // replicas_per_instance))


NO_RULES = FleetRules()
"""No redundancy asked: the solver's default (the service asks for the request's)."""

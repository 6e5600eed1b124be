"""The name of this process among the replicas of one database: ``host:pid``.

In Kubernetes and Compose the host name is the pod's or container's, so the name tells replicas apart
where every process is pid 1. Refresh runs record it, and PostgreSQL sessions carry it as their
``application_name`` (``pg_stat_activity`` shows which replica holds what).
"""

from __future__ import annotations

import os
import socket

__all__ = ["replica_name"]


def replica_name() -> str:
    """``host:pid`` of this process (read each time: a forked child is another replica)."""
    return f"{socket.gethostname()}:{os.getpid()}"

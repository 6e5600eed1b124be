"""Plans: the cheapest (or fastest) configuration for a job, and the cheapest fleet for serving.

``routes`` (POST /v1/plans, GET /v1/plans/{plan_id}) and ``cli`` (``gpuplan plan``) call
``pipeline.PlanService``: validate (workload, supply filters, the kind's own checks) → gather supplies
(``supply``: rented offers; ``owned``: owned GPUs) → solve with ``solver/`` → render → store. The two
kinds, ``jobs`` (train, fine-tune, batch inference) and ``fleets`` (serving), differ only in what they
validate, solve and render; ``render`` holds what every answer shares (id and time stamp, status,
price sheets, rejected GPUs), ``throughput`` the cache of estimates, ``schemas`` the bodies.
"""

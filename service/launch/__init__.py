"""Launch a stored plan: ``GET /v1/plans/{plan_id}/launch?format=skypilot|kubernetes`` and
``gpuplan plans launch ID --format …``.

``targets`` turns a plan into groups of identical nodes (GPUs, seller, disk, the stack's setup and run
with the plan's layout), ``commands`` writes the stack's own commands (torchtitan, torchrun, vLLM),
``manifests`` renders the groups for a launcher, ``export`` does it all for one stored plan.
"""

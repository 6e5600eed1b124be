"""What to benchmark next: ``POST /v1/plans/{plan_id}/benchmarks``, ``gpuplan plans benchmarks ID``
and the stored plan page's short list.

``shortlist`` plans the stored request again and gathers the candidates of a job (``jobs``) or a
fleet (``fleets``), values them (``value``) and compares the new answer with the stored one
(``changes``); ``schemas`` holds the answer.
"""

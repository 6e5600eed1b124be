"""Buy vs rent for finance: owning GPUs against renting them, over a horizon, with every number's source.

``routes`` (POST /v1/buy-vs-rent, JSON, CSV or SVG) and ``cli`` (``gpuplan buy-vs-rent``) call
``compare.buy_vs_rent``, which takes its inputs from ``inputs`` (the GPU, the demand, every ownership
input from the request or the ownership sheet, the rent) and its arithmetic from ``pricing.ownership.tco`` and
``solver.optimise.hybrid``; ``formats`` writes the CSV schedule and the SVG chart; ``schemas`` holds the bodies,
among them :class:`~service.buy_vs_rent.schemas.OwnInputs`, the one description of each ownership input
(``own_inputs`` derives the units table and the CLI options from it).
"""

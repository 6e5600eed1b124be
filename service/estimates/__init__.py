"""Estimates: how much memory a workload needs per GPU and how fast it runs, each with its provenance.

``routes`` (POST /v1/memory, POST /v1/throughput) call ``memory`` and ``throughput``, thin layers over
``solver.memory.peak`` and ``solver.throughput.estimate`` that resolve GPU names against the catalog; ``schemas``
holds the bodies.
"""

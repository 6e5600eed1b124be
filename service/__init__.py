"""The gpuplan service: the Litestar app and the ``gpuplan`` CLI over one DuckDB store.

One package per feature, each holding its routes, logic, schemas and CLI command: ``db`` (the store),
``catalog``, ``price_sheets``, ``plans``, ``estimates``, ``buy_vs_rent``. At the top: the app factory
(``app``), the CLI entry point (``cli``), settings, the error tree and its problem+json mapping
(``errors``, ``problems``), shared HTTP conventions (``http``), ``health``, the OpenAPI completion
(``openapi``) and terminal output (``console``).
"""

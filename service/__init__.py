"""The gpuplan service: DuckDB store, Litestar app, scheduler and CLI."""

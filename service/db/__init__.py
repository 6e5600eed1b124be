"""The DuckDB store and everything that writes it: migrations, the shipped seed, sheet versions.

``store`` opens the database (one read-write process per file) and holds the in-memory catalog
snapshot (``snapshot``) that requests read; ``transactions`` is the one way to write (a transaction
on a cursor of its own, retried on a write conflict); ``migrations``, ``seed`` and ``seed_files``
create and fill a new database; ``sheet_versions`` and ``bulk`` store price-sheet versions and rows;
``stats`` and ``cli`` are ``gpuplan db init|stats``.
"""

"""The store and everything that writes it: two backends, migrations, the shipped seed, sheet versions.

``store`` opens the database (a DuckDB file, one read-write process per file; or a PostgreSQL
database shared by any number of processes) and holds the in-memory catalog snapshot (``snapshot``)
that requests read. ``backend`` is the interface both backends give (``duckdb_backend``,
``postgres_backend``): cursors with ``?`` placeholders (``placeholders`` rewrites them for psycopg),
transactions retried on a write conflict (``transactions``), errors as one (``store_errors``).
``migrations``, ``sequences``, ``seed`` and ``seed_files`` create and fill a new database;
``sheet_versions`` and ``bulk`` store price-sheet versions and rows; ``generation`` tells a process
that another changed the catalog; ``stats`` and ``cli`` are ``gpuplan db init|stats``.
"""

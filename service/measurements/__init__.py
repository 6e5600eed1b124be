"""Imported benchmark results (issue 26): ``POST /v1/measurements`` (admin), ``GET /v1/measurements``,
``gpuplan measurements import``, and the upload page. Each upload of a source is a version (the history
is kept; the newest is current); its runs become measured serving rows (one replica's capacity for a
length bucket) or measured throughput rows (tokens/s of a training setup) that plans use before any
derivation, citing the source."""

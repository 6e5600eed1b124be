"""Operating the service: metrics, JSON logs with request ids, health probes, CORS, HTTP caching and
the 503 for a store that cannot be written."""

"""Running the service: the server's time limits on slow or stalled requests (``limits``) and the
operator's pre-flight check, ``gpuplan check`` (``check``)."""

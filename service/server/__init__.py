"""Running the service: the server's time limits on slow or stalled requests (``limits``), the
operator's pre-flight check, ``gpuplan check`` (``check``), and the API as the CLI reaches a running
server that holds the database (``client``)."""

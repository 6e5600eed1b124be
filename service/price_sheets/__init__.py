"""Price sheets: versioned rental and ownership prices, uploaded or refreshed from configured sources.

``routes`` (GET|POST /v1/price-sheets, /v1/price-sheets/{version}, /v1/price-sheets/refresh,
/v1/offers/{offer_id}/history) and ``cli`` (``gpuplan prices import|refresh|history``) share
``importer`` (format lookup in ``pricing.sheets.formats``, validation, diff, one transaction),
``history`` (versions and price points), ``refresh`` (the scheduled runs) and ``sources`` (source
names, the ``GPUPLAN_SOURCES`` file, fetching); ``schemas`` holds the bodies.
"""

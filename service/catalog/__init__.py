"""The catalog: GPUs, rental offers, measured throughput and serving-capacity profiles.

``routes`` (GET /v1/gpus, /v1/offers, /v1/profiles, /v1/profiles/serving; POST /v1/profiles) and
``cli`` (``gpuplan gpus|offers``) call ``queries``; ``gpu_names`` resolves what a user typed to GPU ids
(every feature uses it); ``serving_profiles`` validates and stores uploaded serving-capacity rows;
``schemas`` holds the pages.
"""

"""Pure planning models: workload specs, GPU facts, memory, throughput and the optimisers.

Nothing in this package does I/O: it takes plain msgspec Structs and returns Structs.
"""

"""covey's benchmarks: ``python -m benchmarks.run [--quick] [--only NAME]`` (see docs/benchmarks.md)."""

"""Benchmarks of an MVP-guarded upgrade: load generator, analysis, mvp_check micro-benchmark, lab driver.

Run from the repository root as ``python -m bench.<tool>`` (see bench/README.md).
"""

"""Perf artifacts: SPX profiles, MySQL slow logs and HTTP timings turned into findings and reports."""

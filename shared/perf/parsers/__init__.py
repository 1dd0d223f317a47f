"""Perf artifact formats read into plain data: type detection, SPX, slow logs, timings, and the normalised snapshot built from them."""

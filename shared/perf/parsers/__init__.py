"""Perf artifact formats read into plain data.

Type detection, SPX, slow logs, timings, and the normalised snapshot built from them.
"""

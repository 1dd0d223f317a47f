"""The composition root: which capabilities the app has, and how the process's dependencies are built.

Only `functions/`, the CLIs, tests and benchmarks import this package; nothing in a capability or the
platform below it does (import-linter keeps it so).
"""

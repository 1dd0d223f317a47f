"""Diagnostics: every store and dependency checked in parallel, as a Durable orchestration."""

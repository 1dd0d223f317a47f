"""Durable runs: a server-side record per orchestration instance (owner, validated plan, secrets by reference)."""

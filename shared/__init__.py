"""Firebreak core library: capabilities, storage, tool registry and MCP server (no azure.functions here)."""

"""The tool registry: every tool declared once, served over MCP, per-tool HTTP and the tools document."""

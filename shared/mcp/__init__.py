"""The MCP server generated from the tool registry, and its stateless Streamable HTTP endpoint."""

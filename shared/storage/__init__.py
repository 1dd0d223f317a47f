"""Cosmos and Blob access: the only code that builds SDK clients; capability stores sit on top."""

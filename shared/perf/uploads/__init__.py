"""POST /api/artifacts: request bodies split into files (raw or bounded multipart), checked, then stored."""

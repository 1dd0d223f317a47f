"""Debug memory: incidents, solutions and outcomes that learn which fix works in which environment."""

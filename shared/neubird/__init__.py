"""NeuBird: the AI-SRE API behind the neubird_* tools (so far settings and reachability check; tools come with #13)."""

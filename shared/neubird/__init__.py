"""NeuBird: the AI-SRE API behind the neubird_* tools (so far its settings and reachability check; the tools come with issue #13)."""

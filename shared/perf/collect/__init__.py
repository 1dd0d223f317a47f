"""collect.run: the checked plan of a run (and its Durable-safe half), the timed probes, and the bundle they produce."""

"""SPX profiler reports: metadata, streamed trace aggregation, call trees."""

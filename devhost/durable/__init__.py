"""Durable Functions under the offline host: the out-of-process protocol driven by the SDK's own replay engine."""

"""MySQL/MariaDB slow query logs: streaming parser, pt-query-digest-compatible fingerprints, per-class aggregates."""

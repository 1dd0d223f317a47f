"""Health of the app and its stores: `health.check` and the anonymous readiness probe."""

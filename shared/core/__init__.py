"""Settings, errors, logging and dependency wiring shared by every capability."""

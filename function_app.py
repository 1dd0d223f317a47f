"""The Firebreak Functions app: a Durable-capable app with every blueprint registered, nothing else."""

import azure.durable_functions as df
import azure.functions as func

from functions import blueprints
from shared.core.redaction import install_log_redaction

# First, before any record is made: the worker's own log handler sees only redacted records.
install_log_redaction()

app = df.DFApp(http_auth_level=func.AuthLevel.FUNCTION)
for blueprint in blueprints():
    app.register_functions(blueprint)

"""An offline Azure Functions host: loads function_app.py and serves its functions without Core Tools."""

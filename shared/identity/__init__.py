"""Who is calling: principal resolution from Entra tokens, App Service headers, workspace API keys or dev mode."""

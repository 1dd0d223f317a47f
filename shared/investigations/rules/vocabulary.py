"""Words of the platform the rules compare outputs with (not any scenario's data)."""

# Commands a container commonly runs; a "not found" command close to one of them is a typo.
KNOWN_COMMANDS = (
    "wget", "curl", "bash", "sh", "python", "python3", "node", "npm", "java", "nginx", "echo", "sleep", "cat",
    "ls", "cp", "mv", "tar", "gzip", "grep", "sed", "awk", "apt-get", "apk", "pip", "env", "printf",
    "mkdir", "chmod", "chown", "nc", "ping", "nslookup", "dig", "psql", "mysql", "redis-cli", "kubectl",
)  # fmt: skip

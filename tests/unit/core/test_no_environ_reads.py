"""Nothing in shared/ reads the process environment except the settings loader and the few modules listed below
with their reason: every other value comes from `Settings` (read once, validated, documented, in the generated
settings table), so a variable cannot be read in one place and missed by the docs, the deployment or a test."""

from __future__ import annotations

import ast
from pathlib import Path

SHARED = Path(__file__).resolve().parents[3] / "shared"

# Module (relative to shared/) -> why it may read the environment.
ALLOWED = {
    "core/settings.py": "the settings loader: Settings.from_env reads the process environment by default",
    "core/settings_section.py": "the settings loader: a section read alone (SettingsSection.from_env) likewise",
    "core/guarded_http.py": "SSL_CERT_FILE / SSL_CERT_DIR are OpenSSL's own variables for a private CA: every TLS "
    "client in the process (the openai and Azure SDKs through httpx and OpenSSL) takes them from the environment, "
    "and the guarded client must trust the same CAs, not a second copy in Settings",
    "investigations/__main__.py": "a command that starts the scenario runner as a child: it passes the environment "
    "on (with PYTHONPATH), it reads no setting",
    "app/api_keys_cli.py": "a command run outside the Functions host: it puts local.settings.json's values into "
    "its own environment before the settings loader reads it",
}

_READERS = frozenset({"environ", "environb", "getenv", "getenvb"})


def environment_reads(source: str) -> list[int]:
    """Line numbers where `source` touches os.environ / os.getenv (through any alias or a `from os import`)."""
    tree = ast.parse(source)
    os_names = {"os"}
    direct: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            os_names |= {a.asname or a.name for a in node.names if a.name == "os"}
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            direct |= {a.asname or a.name for a in node.names if a.name in _READERS}

    def reads(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute):  # os.environ, o.getenv
            return node.attr in _READERS and isinstance(node.value, ast.Name) and node.value.id in os_names
        if isinstance(node, ast.Name):  # environ after `from os import environ`
            return node.id in direct
        # the `from os import environ` itself (an unused import still says the module means to read)
        return isinstance(node, ast.ImportFrom) and node.module == "os" and any(a.name in _READERS for a in node.names)

    lines = [getattr(node, "lineno", 0) for node in ast.walk(tree) if reads(node)]
    return sorted(lines)


def _reads_by_module() -> dict[str, list[int]]:
    found = {}
    for path in sorted(SHARED.rglob("*.py")):
        lines = environment_reads(path.read_text())
        if lines:
            found[path.relative_to(SHARED).as_posix()] = lines
    return found


def test_the_check_finds_every_spelling_of_an_environment_read() -> None:
    spellings = [
        "import os\nos.environ.get('X')",
        "import os\nos.getenv('X')",
        "import os as o\no.environ['X']",
        "from os import environ\nenviron.get('X')",
        "from os import getenv as g\ng('X')",
        "import os\nv = dict(os.environ)",
    ]
    for source in spellings:
        assert environment_reads(source), source
    assert environment_reads("import os\nos.path.join('a', 'b')\nenviron = {}\nenviron.get('X')") == []


def test_no_module_in_shared_reads_the_environment_outside_the_allow_list() -> None:
    outside = {module: lines for module, lines in _reads_by_module().items() if module not in ALLOWED}
    assert outside == {}, (
        "read the variable in a settings section (shared/<capability>/settings.py, or Settings) and pass the "
        f"value in: {outside}"
    )


def test_every_allowed_module_still_reads_the_environment() -> None:
    # An entry that no longer applies is removed, so the list says where the environment is read today.
    assert set(ALLOWED) == set(_reads_by_module())

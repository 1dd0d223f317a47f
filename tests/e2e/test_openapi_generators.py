"""The OpenAPI document the real host serves generates clean clients, and two generated clients do the phone's flows.

`openapi-python-client` (pip) and `openapi-typescript` (npm) run on GET /api/openapi.json as a mobile or script
developer would run them: neither may warn (an operation dropped, two component names colliding), every
operationId of the document is in both outputs, and the Python client imports. Then, with a workspace API key as
the bearer token (the host runs with dev mode off, so nothing else is accepted):
- the generated Python client creates a task, lists it with the phone's filters, updates it, completes it,
  deletes it after the two-step confirmation, and sends a chat message;
- tests/fixtures/openapi_clients/phone_flows.ts does the same with the TypeScript types and openapi-fetch: tsc
  type-checks it against the generated types, then Node (22, type stripping) runs it.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from devhost.processes import HostProcess
from shared.tools.deps import Deps

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "node_modules" / ".bin"
FLOWS = ROOT / "tests" / "fixtures" / "openapi_clients" / "phone_flows.ts"
PACKAGE = "firebreak_client"  # openapi-python-client's name for the title "Firebreak"
# What either generator prints when it leaves something out or trips on a name.
TROUBLE = re.compile(r"warn|error|unable|could not|duplicate|skipp", re.IGNORECASE)


@pytest.fixture(scope="module")
def api_host(start_host: Callable[..., HostProcess]) -> HostProcess:
    """Dev mode off: a call is a bearer token's or a 401, as on Azure."""
    return start_host({"FIREBREAK_DEV_MODE": "false"})


@pytest.fixture(scope="module")
def document(api_host: HostProcess, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    r = httpx.get(f"{api_host.base_url}/api/openapi.json", timeout=30)
    assert r.status_code == 200, r.text[:300]
    path = tmp_path_factory.mktemp("openapi") / "openapi.json"
    path.write_bytes(r.content)
    return r.json(), path


def _operation_ids(doc: dict[str, Any]) -> list[str]:
    return [op["operationId"] for item in doc["paths"].values() for op in item.values()]


@pytest.fixture(scope="module")
def python_client(document: tuple[dict[str, Any], Path]) -> tuple[Path, str]:
    """(the folder holding the generated package, the generator's output)."""
    out = document[1].parent / "python"
    venv_bin = Path(sys.executable).parent
    done = subprocess.run(
        [
            *(str(venv_bin / "openapi-python-client"), "generate", "--path", str(document[1])),
            *("--meta", "none", "--output-path", str(out / PACKAGE)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        # Its post-generation hooks run ruff, which is in the venv.
        env={**os.environ, "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done.stdout + done.stderr


@pytest.fixture(scope="module")
def typescript_types(document: tuple[dict[str, Any], Path]) -> tuple[Path, str]:
    """(the generated api.ts, the generator's output)."""
    out = document[1].parent / "typescript"
    out.mkdir()
    done = subprocess.run(
        # --default-non-nullable false: a field with a default is optional to send (openapi-typescript 7 makes it
        # required in request bodies too otherwise); answers list such fields as required where they always are.
        [
            str(BIN / "openapi-typescript"),
            str(document[1]),
            "-o",
            str(out / "api.ts"),
            "--default-non-nullable",
            "false",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out / "api.ts", done.stdout + done.stderr


@pytest.fixture(scope="module")
def client_package(python_client: tuple[Path, str]) -> Iterator[Any]:
    """The generated package, imported in this process (and forgotten afterwards)."""
    sys.path.insert(0, str(python_client[0]))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(python_client[0]))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def test_the_python_generator_reports_nothing_dropped_or_colliding(python_client: tuple[Path, str]) -> None:
    assert TROUBLE.findall(python_client[1]) == [], python_client[1]


def test_the_typescript_generator_reports_nothing(typescript_types: tuple[Path, str]) -> None:
    assert TROUBLE.findall(typescript_types[1]) == [], typescript_types[1]


def test_every_operation_is_in_the_python_client(
    document: tuple[dict[str, Any], Path], python_client: tuple[Path, str]
) -> None:
    generated = {p.stem for p in (python_client[0] / PACKAGE / "api").rglob("*.py")}
    missing = [op for op in _operation_ids(document[0]) if op not in generated]
    assert missing == []


def test_every_operation_is_in_the_typescript_types(
    document: tuple[dict[str, Any], Path], typescript_types: tuple[Path, str]
) -> None:
    operations = typescript_types[0].read_text().split("export interface operations {", 1)[1]
    declared = set(re.findall(r"^    ([A-Za-z_][A-Za-z0-9_]*): \{", operations, re.MULTILINE))
    missing = [op for op in _operation_ids(document[0]) if op not in declared]
    assert missing == []


def test_operation_ids_and_component_names_are_identifiers(document: tuple[dict[str, Any], Path]) -> None:
    ids = _operation_ids(document[0])
    assert len(ids) == len(set(ids))
    assert [i for i in ids if not i.isidentifier()] == []
    schemas = document[0]["components"]["schemas"]
    assert [n for n in schemas if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", n)] == []
    # Generators name models by title: a title that differs from its name is a second chance to collide.
    assert [n for n, s in schemas.items() if s.get("title", n) != n] == []


def test_the_python_client_imports_every_module(python_client: tuple[Path, str]) -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        f"import {PACKAGE} as p\n"
        "names = [m.name for m in pkgutil.walk_packages(p.__path__, p.__name__ + '.')]\n"
        "[importlib.import_module(n) for n in names]\n"
        "print(len(names))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=python_client[0], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 100


@pytest.fixture
async def bearer(deps: Deps) -> str:
    """A workspace API key of a fresh workspace, minted as `make api-key` does."""
    minted = await deps.api_keys.mint(f"ws-phone-{uuid.uuid4().hex[:8]}", "phone-user", "generated client")
    return minted.key


def test_the_generated_python_client_does_the_phones_flows(
    api_host: HostProcess, client_package: Any, bearer: str
) -> None:
    from importlib import import_module

    def api(name: str) -> Any:
        return next(
            import_module(m.name)
            for m in pkgutil.walk_packages(client_package.__path__, f"{PACKAGE}.")
            if m.name.endswith(f".{name}")
        )

    models = import_module(f"{PACKAGE}.models")
    client = client_package.AuthenticatedClient(base_url=api_host.base_url, token=bearer)

    made = api("tasks_create").sync_detailed(
        client=client,
        body=models.CreateTaskRequest(
            title="Pick up parcel",
            category="Errands",
            priority=models.CreateTaskRequestPriority.HIGH,
            due_date="2026-12-01T23:30:00Z",
        ),
    )
    assert made.status_code == 201, made.content
    task_id = made.parsed.task.id

    # 23:30 UTC on the 1st is the 2nd in Auckland: the phone's "due on the 2nd" in its zone finds it.
    listed = api("tasks_list").sync(
        client=client,
        q="PARCEL",
        priority=models.TasksListPriorityType0.HIGH,
        due_from="2026-12-02",
        due_to="2026-12-02",
        tz="Pacific/Auckland",
    )
    assert [t.id for t in listed.tasks] == [task_id]
    assert api("tasks_list").sync(client=client, due_from="2026-12-02", due_to="2026-12-02", tz="UTC").tasks == []

    updated = api("tasks_update").sync(
        task_id, client=client, body=models.UpdateTaskBody(description="At the post office")
    )
    assert updated.task.description == "At the post office"
    completed = api("tasks_update").sync(
        task_id, client=client, body=models.UpdateTaskBody(status=models.UpdateTaskBodyStatusType0.COMPLETED)
    )
    assert completed.task.status == "completed"

    preview = api("tool_bulk_delete_tasks").sync(client=client, body=models.BulkDeleteTasksRequest(task_ids=[task_id]))
    assert (preview.dry_run, preview.count) == (True, 1)
    assert api("tasks_get").sync_detailed(task_id, client=client).status_code == 200  # a preview deletes nothing
    confirmed = api("tool_bulk_delete_tasks").sync(
        client=client,
        body=models.BulkDeleteTasksRequest(
            task_ids=[task_id], require_confirmation=False, confirmation_token=preview.confirmation_token
        ),
    )
    assert confirmed.deleted_ids == [task_id]
    gone = api("tasks_get").sync_detailed(task_id, client=client)
    assert gone.status_code == 404
    assert isinstance(gone.parsed, models.Error)

    answer = api("chat_send_message").sync(client=client, body=models.SendMessageBody(message="show my tasks"))
    assert answer.chat_id
    assert answer.response

    # Without the token: 401 with the envelope, which the generated client parses as its Error model.
    anonymous = api("tasks_list").sync_detailed(client=client_package.Client(base_url=api_host.base_url))
    assert anonymous.status_code == 401
    assert anonymous.parsed.error.code == "UNAUTHORIZED"


def test_the_typescript_client_does_the_phones_flows(
    api_host: HostProcess, typescript_types: tuple[Path, str], bearer: str
) -> None:
    folder = typescript_types[0].parent
    (folder / "phone_flows.ts").write_text(FLOWS.read_text())
    (folder / "package.json").write_text(json.dumps({"type": "module", "private": True}))
    (folder / "node_modules").symlink_to(ROOT / "node_modules")
    tsconfig = {
        "compilerOptions": {
            "strict": True,
            "noEmit": True,
            "target": "es2022",
            "module": "nodenext",
            "moduleResolution": "nodenext",
            "allowImportingTsExtensions": True,
            "types": [],
            "lib": ["es2022", "dom"],
            "skipLibCheck": True,
        },
        "files": ["phone_flows.ts"],
    }
    (folder / "tsconfig.json").write_text(json.dumps(tsconfig))
    checked = subprocess.run([str(BIN / "tsc"), "-p", str(folder)], capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    ran = subprocess.run(
        [str(BIN / "node"), str(folder / "phone_flows.ts"), api_host.base_url, bearer],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=folder,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    seen = json.loads(ran.stdout.strip().splitlines()[-1])
    assert seen["listed"] == [seen["created"]]
    assert seen["description"] == "At the post office"
    assert seen["status"] == "completed"
    assert (seen["previewed"], seen["deleted"], seen["after_delete"]) == (1, 1, 404)
    assert seen["chat_id"]
    assert seen["chat_response"] is True
    assert (seen["anonymous"], seen["anonymous_code"]) == (401, "UNAUTHORIZED")

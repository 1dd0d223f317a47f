"""Settings of alert investigations (FIREBREAK_INVESTIGATIONS_*): limits, MCP servers, runbooks.

The LLM is the platform's (`FIREBREAK_LLM_ENDPOINT` + `FIREBREAK_LLM_MODEL`, or `DEFAULT_LLM_PROVIDER` with its
key; shared/core/llm_settings.py, llm.py, llm_providers.py); with none the rule path runs.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field, SecretStr, field_validator

from shared.core.settings import SettingsSection
from shared.investigations.mcp_servers import McpClientSettings, parse_servers
from shared.investigations.runbooks import REPOS_SETTING, RunbookSettings, parse_github_repos
from shared.investigations.tool_policy import ToolPolicy, parse_allowed_tools

log = logging.getLogger(__name__)
_S3_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


class InvestigationSettings(SettingsSection):
    env_prefix = "investigations_"
    env_aliases: ClassVar[Mapping[str, str]] = {"github_token": "GITHUB_TOKEN"}

    # -- the loop ----------------------------------------------------------------------------------------
    max_iterations: int = Field(5, ge=1, le=10, description="Iterations of choose-call-analyse per investigation.")
    max_tool_calls: int = Field(15, ge=1, le=50, description="Tool calls per investigation, over all iterations.")
    max_calls_per_iteration: int = Field(6, ge=1, le=15, description="Tool calls run in parallel in one iteration.")
    data_threshold: int = Field(
        10, ge=1, description="Stop once this many data points (tool calls that returned data) were gathered..."
    )
    min_iterations: int = Field(3, ge=1, description="...but not before this many iterations.")
    time_budget_seconds: int = Field(
        600, ge=30, le=3600, description="Wall-clock budget of one investigation; the report is written when it ends."
    )
    inline_output_bytes: int = Field(
        32 * 1024, ge=1024, description="Tool outputs above this go to Blob; the record and history hold a reference."
    )
    max_alerts_per_request: int = Field(
        20, ge=1, le=100, description="Firing alerts one POST may start investigations for (more is refused)."
    )
    max_active: int = Field(
        50, ge=1, le=100, description="Investigations pending or running at once per workspace (more: RATE_LIMITED)."
    )
    read_secrets: bool = Field(
        False, description="Let investigations read Kubernetes Secrets (kind Secret, secrets_* tools); off: dropped."
    )
    ask_memory: bool = Field(True, description="Ask debug memory (ranked_solutions) whether the alert happened before.")
    record_ttl_days: int = Field(90, ge=1, le=3650, description="Days an investigation record is kept (Azure TTL).")
    metrics_max_records: int = Field(
        1000,
        ge=10,
        le=10_000,
        description="Investigation records get_investigation_metrics reads per answer, newest first (it says when "
        "older ones were left out).",
    )

    # -- MCP servers (mcp_servers.py) -------------------------------------------------------------------
    mcp_servers: str = Field(
        "",
        description='JSON list of MCP servers: {"name","url","headers"} (Streamable HTTP) or '
        '{"name","command","args","env"} (stdio, local only). Empty: no tools (the report says so).',
        repr=False,
    )
    mcp_allow_stdio: bool = Field(False, description="Allow stdio (command) servers; refused on Azure.")
    mcp_allowed_tools: str = Field(
        "",
        description="Tools to offer the planner although their server does not annotate them readOnlyHint: true, "
        "comma-separated: `tool` (any server) or `server/tool`, globs allowed (`k8s/pods_*`). Only tools the "
        "server marks read-only are offered otherwise: the alert, runbook and tool outputs can steer a model.",
    )
    mcp_allow_write_tools: bool = Field(
        False,
        description="Deprecated, loud opt-out: offer every tool, whatever its annotations (delete, exec, apply, "
        "...); every report says so. Name the tools in FIREBREAK_INVESTIGATIONS_MCP_ALLOWED_TOOLS instead.",
    )
    mcp_list_timeout_seconds: float = Field(15.0, gt=0, le=300, description="Per server: connect, handshake, list.")
    mcp_call_timeout_seconds: float = Field(30.0, gt=0, le=600, description="Per tool call, connection included.")
    mcp_max_output_bytes: int = Field(
        1024 * 1024, ge=256, le=4 * 1024 * 1024, description="Tool output kept per call (more is cut and marked)."
    )
    mcp_max_response_bytes: int = Field(
        8 * 1024 * 1024,
        ge=64 * 1024,
        le=32 * 1024 * 1024,
        description="Largest HTTP response body read from an MCP server.",
    )

    # -- runbooks (runbooks.py) --------------------------------------------------------------------------
    github_token: SecretStr | None = Field(
        None,
        description="Token for private GitHub runbooks (alias GITHUB_TOKEN); sent only for the repositories in "
        "FIREBREAK_INVESTIGATIONS_GITHUB_REPOS.",
    )
    github_repos: list[str] = Field(
        default_factory=list,
        description="GitHub repositories the token is sent for, whichever workspace asks: `owner/repo` or "
        "`owner/*`, comma-separated, case-insensitive. Empty: the token is sent nowhere.",
    )
    github_raw_base_url: str = Field(
        "https://raw.githubusercontent.com", description="Where raw GitHub files are read."
    )
    runbook_catalogue_prefix: str = Field(
        "runbooks/", description="Blob prefix inside each workspace holding Markdown runbooks; empty: none."
    )
    runbook_catalogue_folder: str = Field("", description="A folder of Markdown runbooks shared by all workspaces.")
    runbook_catalogue_max_files: int = Field(200, ge=1, le=5000, description="Runbooks read from each source.")
    s3_endpoint_url: str = Field(
        "",
        description="S3 endpoint for s3:// runbooks (https://s3.REGION.amazonaws.com, MinIO); empty: s3:// refused.",
    )
    s3_region: str = Field("us-east-1", description="Region of the S3 client.")
    s3_access_key_id: SecretStr | None = Field(
        None, description="Access key id for s3:// runbooks; the worker's own AWS identity is never used."
    )
    s3_secret_access_key: SecretStr | None = Field(None, description="Secret access key for s3:// runbooks.")
    s3_buckets: list[str] = Field(
        default_factory=list,
        description="Buckets s3:// runbooks are read from with those keys, whichever workspace asks (exact names, "
        "comma-separated). Empty: s3:// runbooks are refused.",
    )
    runbook_max_bytes: int = Field(256 * 1024, ge=1024, le=8 * 1024 * 1024, description="Runbook bytes kept.")
    runbook_timeout_seconds: float = Field(10.0, gt=0, le=120, description="One runbook fetch, redirects included.")
    runbook_max_redirects: int = Field(3, ge=0, le=10, description="Redirects followed, each checked by the guard.")

    @field_validator("github_repos", mode="before")
    @classmethod
    def _repos_parse(cls, value: object) -> list[str]:
        return list(parse_github_repos(value))

    @field_validator("s3_buckets", mode="before")
    @classmethod
    def _buckets_parse(cls, value: object) -> list[str]:
        if value is None:
            return []
        items = re.split(r"[\s,]+", value) if isinstance(value, str) else list(value)  # type: ignore[call-overload]
        buckets = [str(b).strip() for b in items if str(b).strip()]
        bad = next((b for b in buckets if not _S3_BUCKET.fullmatch(b)), None)
        if bad is not None:
            raise ValueError(f"{bad[:80]!r} is not an S3 bucket name (3-63 lowercase letters, digits, '.', '-')")
        return list(dict.fromkeys(buckets))

    @field_validator("mcp_servers")
    @classmethod
    def _servers_parse(cls, value: str) -> str:
        # Checked at start-up so a typo fails the worker with the variable's name, not the first investigation.
        parse_servers(value, allow_stdio=True)
        return value

    @field_validator("mcp_allowed_tools")
    @classmethod
    def _allowed_tools_parse(cls, value: str) -> str:
        parse_allowed_tools(value)
        return value

    def tool_policy(self) -> ToolPolicy:
        """Which tools the operator lets past the read-only rule (tool_policy.py)."""
        return ToolPolicy(allowed=parse_allowed_tools(self.mcp_allowed_tools), allow_all=self.mcp_allow_write_tools)

    def refuse_unsafe(self, *, running_on_azure: bool) -> None:
        self.mcp(running_on_azure=running_on_azure)
        # Not refused (public runbooks still work), but said once at start-up: the operator set a token that
        # does nothing until the repositories it is for are listed.
        if self.github_token is not None and self.github_token.get_secret_value() and not self.github_repos:
            log.warning("GITHUB_TOKEN is set but %s is empty: the token is sent to no repository", REPOS_SETTING)

    def mcp(self, *, running_on_azure: bool) -> McpClientSettings:
        """The MCP client's settings (stdio refused on Azure, as dev mode is)."""
        prefix = "FIREBREAK_INVESTIGATIONS_"
        env = {
            f"{prefix}MCP_SERVERS": self.mcp_servers,
            f"{prefix}MCP_ALLOW_STDIO": "true" if self.mcp_allow_stdio else "false",
            f"{prefix}MCP_LIST_TIMEOUT_SECONDS": str(self.mcp_list_timeout_seconds),
            f"{prefix}MCP_CALL_TIMEOUT_SECONDS": str(self.mcp_call_timeout_seconds),
            f"{prefix}MCP_MAX_OUTPUT_BYTES": str(self.mcp_max_output_bytes),
            f"{prefix}MCP_MAX_RESPONSE_BYTES": str(self.mcp_max_response_bytes),
        }
        return McpClientSettings.from_env(env, running_on_azure=running_on_azure)

    def runbooks(self) -> RunbookSettings:
        return RunbookSettings(
            github_token=self.github_token,
            github_repos=tuple(self.github_repos),
            github_raw_base_url=self.github_raw_base_url,
            catalogue_prefix=self.runbook_catalogue_prefix or None,
            catalogue_folder=self.runbook_catalogue_folder or None,
            catalogue_max_files=self.runbook_catalogue_max_files,
            s3_endpoint_url=self.s3_endpoint_url or None,
            s3_region=self.s3_region,
            s3_access_key_id=self.s3_access_key_id,
            s3_secret_access_key=self.s3_secret_access_key,
            s3_buckets=tuple(self.s3_buckets),
            max_bytes=self.runbook_max_bytes,
            timeout_seconds=self.runbook_timeout_seconds,
            max_redirects=self.runbook_max_redirects,
        )

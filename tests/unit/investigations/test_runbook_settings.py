"""Which repositories the GitHub token is for and which S3 keys a runbook may use: the settings and the pure
checks behind them (the fetches themselves are in tests/integration/investigations/test_runbooks.py)."""

from __future__ import annotations

import logging

import pytest

from shared.core.settings import Settings, SettingsError
from shared.investigations.runbooks import RunbookSettings, parse_github_repos, repository_listed
from shared.investigations.settings import InvestigationSettings

TOKEN = "ghp_" + "s" * 36


def test_the_repository_list_is_read_lower_cased_and_reaches_the_runbook_settings() -> None:
    s = InvestigationSettings.from_env(
        {"GITHUB_TOKEN": TOKEN, "FIREBREAK_INVESTIGATIONS_GITHUB_REPOS": " Acme/Ops, acme/ops  Platform-Team/*,"}
    )
    assert s.github_repos == ["acme/ops", "platform-team/*"]
    assert s.runbooks().github_repos == ("acme/ops", "platform-team/*")
    assert InvestigationSettings.from_env({}).runbooks().github_repos == ()


@pytest.mark.parametrize(
    "entry", ["*", "*/*", "acme", "acme/", "/ops", "acme/ops/extra", "../ops", "acme/..", "a b/c?", "acme/o%70s"]
)
def test_a_repository_entry_that_is_not_owner_slash_repo_stops_the_worker(entry: str) -> None:
    with pytest.raises(SettingsError, match="FIREBREAK_INVESTIGATIONS_GITHUB_REPOS"):
        InvestigationSettings.from_env({"FIREBREAK_INVESTIGATIONS_GITHUB_REPOS": f"acme/ops,{entry}"})
    with pytest.raises(ValueError, match="is not owner/repo or owner/"):
        parse_github_repos(entry)


def test_a_token_without_a_repository_list_is_announced_at_start_up(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    Settings.from_env({"GITHUB_TOKEN": TOKEN}, sections=(InvestigationSettings,))
    assert "FIREBREAK_INVESTIGATIONS_GITHUB_REPOS is empty" in caplog.text
    assert TOKEN not in caplog.text
    caplog.clear()
    env = {"GITHUB_TOKEN": TOKEN, "FIREBREAK_INVESTIGATIONS_GITHUB_REPOS": "acme/ops"}
    Settings.from_env(env, sections=(InvestigationSettings,))
    Settings.from_env({}, sections=(InvestigationSettings,))
    assert "GITHUB_REPOS" not in caplog.text


@pytest.mark.parametrize(
    ("path", "listed"),
    [
        ("/acme/ops/main/runbooks/crash.md", True),
        ("/ACME/Ops/main/crash.md", True),
        ("/platform/anything/v1/x.md", True),
        ("/acme/ops-x/main/x.md", False),
        ("/acme-x/ops/main/x.md", False),
        ("/other/secret/main/.env", False),
        ("/acme/ops%2F..%2F..%2Fother/secret/main/.env", False),
        ("/acme/%6Fps/main/x.md", False),  # encoded: not what the list names, whatever the server makes of it
        ("/acme/../other/main/x.md", False),
        ("/acme", False),
        ("/", False),
    ],
)
def test_only_a_listed_repositorys_path_is_listed(path: str, listed: bool) -> None:
    repos = parse_github_repos("acme/ops, platform/*")
    assert repository_listed(path, "", repos) is listed
    # Under a raw base with a path (GitHub Enterprise, a test double) the owner comes after it.
    assert repository_listed(f"/raw{path}", "/raw/", repos) is listed
    assert not repository_listed(path, "/raw", repos)


def test_s3_keys_are_secrets_read_from_their_settings() -> None:
    s = InvestigationSettings.from_env(
        {
            "FIREBREAK_INVESTIGATIONS_S3_ENDPOINT_URL": "https://s3.eu-west-1.amazonaws.com",
            "FIREBREAK_INVESTIGATIONS_S3_ACCESS_KEY_ID": "AKIAEXAMPLEKEYID0001",
            "FIREBREAK_INVESTIGATIONS_S3_SECRET_ACCESS_KEY": "example/secret/access/key/0123456789",
        }
    )
    config = s.runbooks()
    assert config.s3_access_key_id is not None
    assert config.s3_access_key_id.get_secret_value() == "AKIAEXAMPLEKEYID0001"
    assert config.s3_secret_access_key is not None
    for shown in (repr(s), str(s), repr(config), s.model_dump_json(), config.model_dump_json()):
        assert "AKIAEXAMPLEKEYID0001" not in shown
        assert "example/secret" not in shown
    assert sorted(config.secrets()) == ["AKIAEXAMPLEKEYID0001", "example/secret/access/key/0123456789"]
    assert RunbookSettings().secrets() == []


def test_s3_buckets_are_a_list_of_exact_bucket_names() -> None:
    s = InvestigationSettings.from_env(
        {"FIREBREAK_INVESTIGATIONS_S3_BUCKETS": "runbooks-prod, ops.runbooks runbooks-prod"}
    )
    assert s.runbooks().s3_buckets == ("runbooks-prod", "ops.runbooks")
    assert InvestigationSettings.from_env({}).runbooks().s3_buckets == ()
    for bad in ("*", "Runbooks", "runbooks/prefix", "s3://runbooks"):
        with pytest.raises((SettingsError, ValueError)):
            InvestigationSettings.from_env({"FIREBREAK_INVESTIGATIONS_S3_BUCKETS": bad})

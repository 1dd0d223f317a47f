"""Runbook URL rewriting, front matter, catalogue matching and HTML text: the pure parts of runbooks.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.core.outbound import OutboundGuard
from shared.core.settings import Settings
from shared.investigations.html_text import html_to_text
from shared.investigations.runbooks import (
    Catalogue,
    RunbookRef,
    RunbookSettings,
    fetch_runbook,
    github_raw_url,
    load_catalogue,
    match_runbook,
    parse_front_matter,
)

RAW = "https://raw.githubusercontent.com"


@pytest.mark.parametrize(
    ("url", "raw"),
    [
        (
            "https://github.com/acme/ops/blob/main/runbooks/KubePodCrashLooping.md",
            f"{RAW}/acme/ops/main/runbooks/KubePodCrashLooping.md",
        ),
        ("https://github.com/acme/ops/blob/v1.2/a.md?plain=1#L10", f"{RAW}/acme/ops/v1.2/a.md"),
        ("https://www.github.com/acme/ops/raw/0123abc/docs/x.md", f"{RAW}/acme/ops/0123abc/docs/x.md"),
        ("https://raw.githubusercontent.com/acme/ops/main/x.md", f"{RAW}/acme/ops/main/x.md"),
        ("https://raw.githubusercontent.com/acme/ops/main/x.md?token=ABC", f"{RAW}/acme/ops/main/x.md?token=ABC"),
        ("https://github.com/acme/ops", None),
        ("https://github.com/acme/ops/tree/main/runbooks", None),
        ("https://github.com/acme/ops/blob/main", None),
    ],
)
def test_github_urls_become_raw_file_urls(url: str, raw: str | None) -> None:
    assert github_raw_url(url, RAW) == raw


def test_github_urls_follow_a_configured_raw_base() -> None:
    base = "http://127.0.0.1:8123/"
    assert github_raw_url("https://github.com/o/r/blob/main/a/b.md", base) == "http://127.0.0.1:8123/o/r/main/a/b.md"
    assert github_raw_url(f"{RAW}/o/r/main/a.md", base) == "http://127.0.0.1:8123/o/r/main/a.md"


def test_front_matter_lists_inline_and_as_lines() -> None:
    inline = (
        '---\ntitle: "Pod crash loops"\n'
        "match: [\"KubePod*\", 'alertname=KubePodCrashLooping', namespace=prod]\n---\n# Body\n"
    )
    assert parse_front_matter(inline) == {
        "title": "Pod crash loops",
        "match": ["KubePod*", "alertname=KubePodCrashLooping", "namespace=prod"],
    }
    lines = "---\n# a comment\nmatch:\n  - KubeNode*\n  - severity=critical team=infra\nowner: sre\n---\ntext"
    assert parse_front_matter(lines) == {"match": ["KubeNode*", "severity=critical team=infra"], "owner": "sre"}
    assert parse_front_matter("\ufeff---\nmatch: Kube*\n...\n") == {"match": "Kube*"}


@pytest.mark.parametrize("text", ["# No front matter\nmatch: x\n", "---\nmatch: [a]\nnever closed\n", ""])
def test_text_without_closed_front_matter_has_none(text: str) -> None:
    assert parse_front_matter(text) == {}


def _catalogue(*refs: tuple[str, list[str]]) -> Catalogue:
    return Catalogue(entries=[RunbookRef(name=n, url=f"blob:{n}", match=m) for n, m in refs])


def test_the_most_specific_rule_wins_whatever_the_order() -> None:
    refs = [
        ("generic.md", ["*"]),
        ("kube-pod.md", ["KubePod*"]),
        ("crashloop.md", ["KubePodCrashLooping"]),
        ("crashloop-prod.md", ["KubePodCrashLooping namespace=prod-*"]),
    ]
    for order in (refs, refs[::-1]):
        catalogue = _catalogue(*order)
        hit = match_runbook("KubePodCrashLooping", {"namespace": "prod-eu"}, catalogue)
        assert hit is not None
        assert hit.name == "crashloop-prod.md"
        hit = match_runbook("KubePodCrashLooping", {"namespace": "dev"}, catalogue)
        assert hit is not None
        assert hit.name == "crashloop.md"
        hit = match_runbook("KubePodNotReady", {}, catalogue)
        assert hit is not None
        assert hit.name == "kube-pod.md"
        hit = match_runbook("HostDown", {}, catalogue)
        assert hit is not None
        assert hit.name == "generic.md"


def test_label_rules_and_alertname_label() -> None:
    catalogue = _catalogue(("db.md", ["service=mysql* severity=critical"]), ("named.md", ["alertname=Mysql*"]))
    hit = match_runbook("Anything", {"Service": "MySQL-primary", "severity": "critical"}, catalogue)
    assert hit is not None
    assert hit.name == "db.md"
    assert match_runbook("Anything", {"service": "mysql", "severity": "warning"}, catalogue) is None
    hit = match_runbook("", {"alertname": "MysqlDown"}, catalogue)
    assert hit is not None
    assert hit.name == "named.md"


def test_a_runbook_without_rules_matches_by_file_name() -> None:
    catalogue = _catalogue(("kubernetes/kube-pod-crash-looping.md", []), ("KubeNodeNotReady.md", []))
    hit = match_runbook("KubePodCrashLooping", {}, catalogue)
    assert hit is not None
    assert hit.name == "kubernetes/kube-pod-crash-looping.md"
    hit = match_runbook("KubeNodeNotReady", {}, catalogue)
    assert hit is not None
    assert hit.url == "blob:KubeNodeNotReady.md"
    assert match_runbook("KubePod", {}, catalogue) is None


def test_html_becomes_readable_text() -> None:
    page = (
        "<html><head><title>t</title><style>h1{}</style></head><body><nav>menu</nav><h2>Diagnosis</h2>"
        "<p>Check the <b>pod</b>&nbsp;events.</p><ul><li>kubectl describe</li><li>logs --previous</li></ul>"
        "<script>alert(1)</script></body></html>"
    )
    text = html_to_text(page)
    assert "## Diagnosis" in text
    assert "Check the pod\xa0events." in text
    assert "- kubectl describe\n" in text
    assert "- logs --previous" in text
    assert "alert(1)" not in text
    assert "menu" not in text
    assert "h1{}" not in text


async def test_folder_catalogue_reads_front_matter_within_limits(tmp_path: Path) -> None:
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "crash.md").write_text("---\ntitle: Crash loops\nmatch: [KubePodCrashLooping]\n---\n# Steps\n")
    (tmp_path / "kube-node-not-ready.md").write_text("# Node not ready\n")
    (tmp_path / "notes.json").write_text("{}")
    for i in range(3):
        (tmp_path / f"z{i}.md").write_text("---\nmatch: [Z*]\n---\n")
    config = RunbookSettings(catalogue_folder=str(tmp_path), catalogue_max_files=4, catalogue_prefix=None)
    catalogue = await load_catalogue(config)
    assert [e.name for e in catalogue.entries] == ["k8s/crash.md", "kube-node-not-ready.md", "z0.md", "z1.md"]
    assert catalogue.skipped == 1
    assert catalogue.errors == []
    assert catalogue.entries[0].title == "Crash loops"
    hit = match_runbook("KubePodCrashLooping", {}, catalogue)
    assert hit is not None
    assert hit.url == "catalogue:k8s/crash.md"
    guard = OutboundGuard(Settings())
    result = await fetch_runbook(hit.url, config, guard=guard, blobs=None, workspace="w1")
    assert result.status == "ok"
    assert result.kind == "catalogue"
    assert "# Steps" in result.text
    assert result.content_type == "text/markdown"


async def test_folder_runbooks_stay_inside_the_folder(tmp_path: Path) -> None:
    inside = tmp_path / "book"
    inside.mkdir()
    (tmp_path / "secret.md").write_text("outside")
    (inside / "link.md").symlink_to(tmp_path / "secret.md")
    config = RunbookSettings(catalogue_folder=str(inside))
    guard = OutboundGuard(Settings())
    for url, status in [
        ("catalogue:../secret.md", "refused"),
        ("catalogue:/etc/passwd", "refused"),
        ("catalogue:link.md", "not_found"),
        ("catalogue:missing.md", "not_found"),
    ]:
        result = await fetch_runbook(url, config, guard=guard, blobs=None, workspace="w1")
        assert result.status == status, url
        assert result.text == ""
        assert "outside" not in result.model_dump_json()
    catalogue = await load_catalogue(config)
    assert catalogue.entries == []  # the symlink is not listed either


async def test_unsupported_locations_are_refused_without_io() -> None:
    config = RunbookSettings()
    guard = OutboundGuard(Settings())
    for url in [
        "file:///etc/passwd",
        "ftp://example.com/a.md",
        "gopher://x/",
        "",
        "   ",
        "not a url",
        "javascript:alert(1)",
    ]:
        result = await fetch_runbook(url, config, guard=guard, blobs=None, workspace="w1")
        assert result.status == "refused", url
        assert result.kind == "unknown"
        assert result.error
    result = await fetch_runbook("https://example.com/" + "a" * 3000, config, guard=guard, blobs=None, workspace="w")
    assert result.status == "refused"
    assert "2048" in (result.error or "")
    result = await fetch_runbook("s3://Bad_Bucket/key", config, guard=guard, blobs=None, workspace="w")
    assert result.status == "refused"
    assert result.kind == "s3"
    result = await fetch_runbook("blob:runbooks/a.md", config, guard=guard, blobs=None, workspace="w")
    assert result.status == "error"
    assert "not configured" in (result.error or "")

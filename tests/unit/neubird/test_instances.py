"""neubird_switch_instance's URL rules: the spec's normalisation table, the host allow-list, hostile inputs."""

from __future__ import annotations

import pytest

from shared.core.errors import ValidationFailed
from shared.neubird.instances import (
    SPEC_SUGGESTIONS,
    console_url,
    host_allowed,
    invalid_patterns,
    normalise_base_url,
)

DEFAULT = ("*.app.neubird.ai",)

# The spec's table (neubird_switch_instance, "URL Normalization Examples"), every row.
SPEC_TABLE = [
    ("prod", "https://prod.app.neubird.ai/api"),
    ("customerA", "https://customerA.app.neubird.ai/api"),
    ("staging", "https://staging.app.neubird.ai/api"),
    ("prod.app.neubird.ai", "https://prod.app.neubird.ai/api"),
    ("https://prod.app.neubird.ai", "https://prod.app.neubird.ai/api"),
    ("https://prod.app.neubird.ai/api", "https://prod.app.neubird.ai/api"),
    ("custom.domain.com/api", "https://custom.domain.com/api"),
]


@pytest.mark.parametrize(("text", "normalised"), SPEC_TABLE)
def test_spec_normalisation_table(text: str, normalised: str) -> None:
    assert normalise_base_url(text) == normalised


@pytest.mark.parametrize(("text", "allowed"), [(text, text != "custom.domain.com/api") for text, _ in SPEC_TABLE])
def test_spec_table_against_the_default_allow_list(text: str, allowed: bool) -> None:
    assert host_allowed(normalise_base_url(text), DEFAULT) is allowed


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("  prod  ", "https://prod.app.neubird.ai/api"),
        ("prod\n", "https://prod.app.neubird.ai/api"),
        ("https://prod.app.neubird.ai/", "https://prod.app.neubird.ai/api"),
        ("https://prod.app.neubird.ai/api/", "https://prod.app.neubird.ai/api"),
        ("prod.app.neubird.ai/api", "https://prod.app.neubird.ai/api"),
        ("HTTPS://prod.app.neubird.ai/api", "https://prod.app.neubird.ai/api"),
        ("https://prod.app.neubird.ai:443/api", "https://prod.app.neubird.ai/api"),
        ("prod/api", "https://prod.app.neubird.ai/api"),
        ("dev-eu-1", "https://dev-eu-1.app.neubird.ai/api"),
        ("a.b.app.neubird.ai", "https://a.b.app.neubird.ai/api"),
        ("xn--prd-jua.app.neubird.ai", "https://xn--prd-jua.app.neubird.ai/api"),
        ("http://127.0.0.1:8123", "http://127.0.0.1:8123/api"),
        ("http://localhost:3000", "http://localhost:3000/api"),
        ("[::1]:8443", "https://[::1]:8443/api"),
    ],
)
def test_more_normalisations(text: str, normalised: str) -> None:
    assert normalise_base_url(text) == normalised


def test_hosts_keep_their_case_but_compare_case_insensitively() -> None:
    url = normalise_base_url("Prod.App.NeuBird.AI")
    assert url == "https://Prod.App.NeuBird.AI/api"
    assert host_allowed(url, DEFAULT)
    assert host_allowed("https://prod.app.neubird.ai/api", ("*.APP.NEUBIRD.AI",))
    assert host_allowed("https://CUSTOMERA.app.neubird.ai/api", ("customera.app.neubird.ai",))


# Inputs that normalise but the default allow-list refuses.
NORMALISE_THEN_REFUSE = [
    ("http://169.254.169.254", "http://169.254.169.254/api"),
    ("169.254.169.254", "https://169.254.169.254/api"),
    ("HTTP://169.254.169.254/api", "http://169.254.169.254/api"),
    ("prod.app.neubird.ai.evil.com", "https://prod.app.neubird.ai.evil.com/api"),
    ("PROD.APP.NEUBIRD.AI.EVIL.COM", "https://PROD.APP.NEUBIRD.AI.EVIL.COM/api"),
    ("evilapp.neubird.ai", "https://evilapp.neubird.ai/api"),
    ("app.neubird.ai.evil.com/api", "https://app.neubird.ai.evil.com/api"),
    ("prod.app.neubird.ai:8443", "https://prod.app.neubird.ai:8443/api"),
    ("https://prod.app.neubird.ai:8443/api", "https://prod.app.neubird.ai:8443/api"),
    ("prod:8443", "https://prod.app.neubird.ai:8443/api"),
    ("http://prod.app.neubird.ai", "http://prod.app.neubird.ai/api"),
    ("http://prod.app.neubird.ai:443/api", "http://prod.app.neubird.ai:443/api"),
    ("127.0.0.1", "https://127.0.0.1/api"),
    ("10.0.0.1:443", "https://10.0.0.1/api"),
    ("[::1]", "https://[::1]/api"),
    ("https://[fd00:ec2::254]/api", "https://[fd00:ec2::254]/api"),
    ("https://[::ffff:169.254.169.254]", "https://[::ffff:169.254.169.254]/api"),
    ("localhost", "https://localhost/api"),
    ("LOCALHOST", "https://LOCALHOST/api"),
    ("localhost:3000", "https://localhost:3000/api"),
    ("app.neubird.ai", "https://app.neubird.ai/api"),
    ("custom.domain.com/api", "https://custom.domain.com/api"),
    ("https://prod", "https://prod/api"),
]


@pytest.mark.parametrize(("text", "normalised"), NORMALISE_THEN_REFUSE)
def test_hostile_inputs_that_normalise_are_refused_by_the_default_allow_list(text: str, normalised: str) -> None:
    url = normalise_base_url(text)
    assert url == normalised
    assert not host_allowed(url, DEFAULT)
    assert not host_allowed(text, DEFAULT)


# Inputs normalisation refuses (the message's reason).
FAIL_NORMALISATION = [
    ("evil.com/prod.app.neubird.ai", "path"),
    ("https://user:pw@prod.app.neubird.ai", "user information"),
    ("https://prod.app.neubird.ai@evil.com", "user information"),
    ("user@prod.app.neubird.ai", "user information"),
    ("https://evil.com#@prod.app.neubird.ai", "user information"),
    ("prod.app.neubird.ai.", "ends with a dot"),
    ("https://prod.app.neubird.ai./api", "ends with a dot"),
    ("prod .app.neubird.ai", "spaces or control"),
    ("prod.app.neubird.ai\r\nHost: evil.com", "spaces or control"),
    ("prod.app\x00.neubird.ai", "spaces or control"),
    ("prod.app.neubird.ai\t/api", "spaces or control"),
    ("https://evil.com\\prod.app.neubird.ai", "backslashes"),
    ("https:\\\\prod.app.neubird.ai", "backslashes"),
    ("https://prod%2Eapp.neubird.ai", "percent-encoding"),
    ("https://prod.app.neubird.ai/%61pi", "percent-encoding"),
    ("pr\u043ed.app.neubird.ai", "non-ASCII"),  # Cyrillic o
    ("prod\uff0eapp.neubird.ai", "non-ASCII"),  # full-width dot
    ("prod.app.neubird.ai\u200b", "non-ASCII"),  # zero-width space
    ("https://prod.app.neubird.ai/api?redirect=evil.com", "a query"),
    ("https://prod.app.neubird.ai/api#frag", "a fragment"),
    ("https://prod.app.neubird.ai/api/../admin", "path"),
    ("https://prod.app.neubird.ai/x/api", "path"),
    ("https://prod.app.neubird.ai//api", "path"),
    ("https://prod.app.neubird.ai/api/v1", "path"),
    ("https://prod.app.neubird.ai/API", "path"),
    ("", "empty"),
    ("   ", "empty"),
    ("https://" + "a" * 2050 + ".app.neubird.ai", "longer than 2048"),
    ("a" * 2049, "longer than 2048"),
    ("file:///etc/passwd", "scheme 'file'"),
    ("javascript:alert(1)", "scheme 'javascript'"),
    ("ftp://prod.app.neubird.ai", "scheme 'ftp'"),
    ("https:prod.app.neubird.ai", "not followed by //"),
    ("//prod.app.neubird.ai", "no scheme"),
    ("//evil.com/api", "no scheme"),
    ("https://", "no host"),
    ("https:///api", "no host"),
    ("https://:443/api", "no host"),
    ("::1", "no host"),
    ("prod.app.neubird.ai:", "port"),
    ("prod.app.neubird.ai:0", "port"),
    ("prod.app.neubird.ai:65536", "port"),
    ("prod.app.neubird.ai:0443", "port"),
    ("prod.app.neubird.ai:8443:1", "port"),
    ("https://[::1", "closing bracket"),
    ("https://[not-ip]/api", "IPv6"),
    ("https://[::1]x/api", "after the IPv6"),
    ("0177.0.0.1", "neither a host name nor a dotted IPv4"),
    ("2130706433", "neither a host name nor a dotted IPv4"),
    ("1.2.3", "neither a host name nor a dotted IPv4"),
    ("-prod.app.neubird.ai", "not a valid host name"),
    ("prod_1.app.neubird.ai", "not a valid host name"),
    ("prod..app.neubird.ai", "not a valid host name"),
    ("*.app.neubird.ai", "not a valid host name"),
    ("a" * 64 + ".app.neubird.ai", "not a valid host name"),
    (".".join(["a" * 60] * 5), "longer than 253"),
]


@pytest.mark.parametrize(("text", "reason"), FAIL_NORMALISATION)
def test_hostile_inputs_fail_normalisation_with_the_spec_suggestions(text: str, reason: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        normalise_base_url(text)
    error = caught.value
    assert reason in error.message
    assert error.message.startswith("Invalid base URL format:")
    assert error.details["type"] == "validation"
    assert error.details["field"] == "base_url"
    assert error.recovery_suggestions[: len(SPEC_SUGGESTIONS)] == list(SPEC_SUGGESTIONS)
    assert not host_allowed(text, DEFAULT)
    assert not host_allowed(text, DEFAULT, always=(text,))


def test_credentials_in_a_refused_url_never_reach_the_error() -> None:
    with pytest.raises(ValidationFailed) as caught:
        normalise_base_url("https://alice:s3cret-pw@prod.app.neubird.ai/api")
    error = caught.value
    assert "s3cret" not in error.message
    assert "s3cret" not in repr(error.details)
    assert "s3cret" not in repr(error.recovery_suggestions)


def test_a_harmless_refused_input_is_echoed() -> None:
    with pytest.raises(ValidationFailed) as caught:
        normalise_base_url("invalid url")
    assert caught.value.message == "Invalid base URL format: 'invalid url': it has spaces or control characters inside."


@pytest.mark.parametrize(
    ("url", "patterns", "allowed"),
    [
        # wildcard: one or more labels, default port, not the apex
        ("https://prod.app.neubird.ai/api", ("*.app.neubird.ai",), True),
        ("https://a.b.app.neubird.ai/api", ("*.app.neubird.ai",), True),
        ("https://app.neubird.ai/api", ("*.app.neubird.ai",), False),
        ("https://app.neubird.ai/api", ("*.app.neubird.ai", "app.neubird.ai"), True),
        ("https://prod.app.neubird.ai:8443/api", ("*.app.neubird.ai",), False),
        ("https://prod.app.neubird.ai:8443/api", ("*.app.neubird.ai:8443",), True),
        ("https://prod.app.neubird.ai/api", ("*.app.neubird.ai:8443",), False),
        ("https://prod.app.neubird.ai:443/api", ("*.app.neubird.ai:443",), True),
        ("https://xapp.neubird.ai/api", ("*.app.neubird.ai",), False),
        ("https://prod.app.neubird.ai.evil.com/api", ("*.app.neubird.ai",), False),
        # exact hosts and host:port
        ("https://custom.domain.com/api", ("custom.domain.com",), True),
        ("https://sub.custom.domain.com/api", ("custom.domain.com",), False),
        ("https://custom.domain.com:9443/api", ("custom.domain.com",), False),
        ("https://custom.domain.com:9443/api", ("custom.domain.com:9443",), True),
        ("https://127.0.0.1:8443/api", ("127.0.0.1:8443",), True),
        ("https://[::1]:8443/api", ("[::1]:8443",), True),
        ("https://[::1]/api", ("[::1]",), True),
        ("https://127.0.0.1/api", ("*.0.0.1",), False),
        # https only for patterns
        ("http://custom.domain.com/api", ("custom.domain.com",), False),
        ("http://127.0.0.1:8443/api", ("127.0.0.1:8443",), False),
        # patterns with spaces and case; malformed patterns never match
        ("https://prod.app.neubird.ai/api", ("  *.App.Neubird.AI  ",), True),
        ("https://prod.app.neubird.ai/api", ("*",), False),
        ("https://prod.app.neubird.ai/api", ("*app.neubird.ai",), False),
        ("https://prod.app.neubird.ai/api", ("prod.*.neubird.ai",), False),
        ("https://prod.app.neubird.ai/api", ("",), False),
        ("https://prod.app.neubird.ai/api", ("https://prod.app.neubird.ai",), False),
        ("https://prod.app.neubird.ai/api", (), False),
        # the URL itself is normalised first: unnormalisable never passes
        ("prod", ("*.app.neubird.ai",), True),
        ("https://prod.app.neubird.ai@evil.com/api", ("*.app.neubird.ai", "evil.com"), False),
    ],
)
def test_pattern_grammar(url: str, patterns: tuple[str, ...], allowed: bool) -> None:
    assert host_allowed(url, patterns) is allowed


@pytest.mark.parametrize(
    ("url", "always", "allowed"),
    [
        ("http://127.0.0.1:8123/api", ("http://127.0.0.1:8123/api",), True),
        ("http://127.0.0.1:8123", ("http://127.0.0.1:8123/api",), True),
        ("http://127.0.0.1:8124/api", ("http://127.0.0.1:8123/api",), False),
        ("https://127.0.0.1:8123/api", ("http://127.0.0.1:8123/api",), False),
        ("http://localhost:8123/api", ("http://127.0.0.1:8123/api",), False),
        ("https://Sandbox.App.Neubird.AI/api", ("https://sandbox.app.neubird.ai/api",), True),
        ("https://sandbox.app.neubird.ai/api", ("https://sandbox.app.neubird.ai:443/api",), True),
        ("http://sandbox.app.neubird.ai/api", ("https://sandbox.app.neubird.ai/api",), False),
        ("http://sandbox.app.neubird.ai/api", ("http://sandbox.app.neubird.ai/api",), True),
        # the configured URL's path does not matter, only scheme, host and port
        ("https://your-tenant.neubird.ai/api", ("https://your-tenant.neubird.ai/api/v1",), True),
        ("https://other.example.com/api", ("not a url",), False),
    ],
)
def test_always_allowed_urls_compare_scheme_host_and_port(url: str, always: tuple[str, ...], allowed: bool) -> None:
    assert host_allowed(url, (), always=always) is allowed


def test_invalid_patterns_lists_the_malformed_ones() -> None:
    patterns = [
        "*.app.neubird.ai",
        "app.neubird.ai",
        "host:8443",
        "[::1]:8080",
        "*",
        "*x.com",
        "a.*.com",
        "h:99999",
        "",
    ]
    assert invalid_patterns(patterns) == ["*", "*x.com", "a.*.com", "h:99999", ""]


@pytest.mark.parametrize(
    ("base", "console"),
    [
        ("https://prod.app.neubird.ai/api", "https://prod.app.neubird.ai"),
        ("https://prod.app.neubird.ai/api/", "https://prod.app.neubird.ai"),
        ("https://customerA.app.neubird.ai/api", "https://customerA.app.neubird.ai"),
        ("http://127.0.0.1:8123/api", "http://127.0.0.1:8123"),
        ("https://prod.app.neubird.ai", "https://prod.app.neubird.ai"),
    ],
)
def test_console_url(base: str, console: str) -> None:
    assert console_url(base) == console

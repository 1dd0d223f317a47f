"""Canonical environment buckets (`os|language|framework|runtime|cloud`) and their weighted similarity.

An agent describes its environment as free-form JSON. The bucket keeps what decides whether a fix
transfers, at major-version granularity: `linux|py3|django4|k8s1|aws`. Unknown parts are `any`.

Similarity is a weighted sum over the five components (weights below). Per component: the same
value scores 1; the same family with another major version (py3 vs py2, django4 vs django3) 0.5; an
`any` on either side 0.5 (nothing known either way); different families 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

COMPONENTS = ("os", "language", "framework", "runtime", "cloud")
WEIGHTS = {"os": 0.15, "language": 0.30, "framework": 0.25, "runtime": 0.20, "cloud": 0.10}
ANY = "any"
_BUCKET = re.compile(r"^[a-z0-9.+-]+(\|[a-z0-9.+-]+){4}$")

# family -> spellings (matched as whole words in lowercase text)
_OS = {
    "linux": [
        "linux",
        "ubuntu",
        "debian",
        "centos",
        "rhel",
        "red hat",
        "alpine",
        "fedora",
        "amazon linux",
        "amzn",
        "arch",
        "suse",
        "rocky",
        "almalinux",
    ],
    "macos": ["macos", "mac os", "osx", "os x", "darwin"],
    "windows": ["windows", "win32", "win64", "win10", "win11", "windows server"],
}
_LANGUAGES = {
    "py": ["python", "cpython", "py", "pypy"],
    "node": ["node", "nodejs", "node.js", "javascript", "typescript", "deno", "bun"],
    "java": ["java", "jdk", "openjdk", "jvm", "kotlin", "scala"],
    "go": ["go", "golang"],
    "rb": ["ruby"],
    "php": ["php"],
    "dotnet": [".net", "dotnet", "c#", "csharp", "net core"],
    "rust": ["rust", "rustc"],
    "elixir": ["elixir", "erlang"],
}
_FRAMEWORKS = {
    "django": ["django"],
    "flask": ["flask"],
    "fastapi": ["fastapi"],
    "rails": ["rails", "ruby on rails"],
    "spring": ["spring", "spring boot", "springboot"],
    "express": ["express"],
    "nextjs": ["next.js", "nextjs", "next"],
    "react": ["react"],
    "laravel": ["laravel"],
    "symfony": ["symfony"],
    "aspnet": ["asp.net", "aspnet"],
    "nestjs": ["nestjs", "nest"],
    "gin": ["gin"],
    "celery": ["celery"],
    "angular": ["angular"],
    "vue": ["vue"],
}
_RUNTIMES = {
    "k8s": ["kubernetes", "k8s", "eks", "aks", "gke", "openshift", "k3s", "kind", "minikube"],
    "docker": ["docker", "container", "containers", "podman", "docker compose", "compose", "ecs", "fargate"],
    "serverless": ["serverless", "lambda", "azure functions", "cloud functions", "cloud run", "functions"],
    "bare": ["bare", "bare metal", "baremetal", "vm", "virtual machine", "ec2", "systemd", "host"],
}
_CLOUDS = {
    "aws": ["aws", "amazon", "eks", "ec2", "lambda", "ecs", "fargate", "rds"],
    "azure": ["azure", "aks", "microsoft azure"],
    "gcp": ["gcp", "google cloud", "gke", "cloud run", "gcloud"],
    "onprem": ["on-prem", "onprem", "on prem", "datacenter", "self-hosted", "self hosted"],
}
# Which JSON keys speak about which component; other keys are still read, after these.
_KEYS = {
    "os": ("os", "distro", "distribution", "platform", "operating_system", "system"),
    "language": (
        "language",
        "lang",
        "runtime_language",
        "python",
        "python_version",
        "node",
        "node_version",
        "java",
        "go",
    ),
    "framework": ("framework", "frameworks", "web_framework", "library"),
    "runtime": (
        "runtime",
        "orchestrator",
        "orchestration",
        "deployment",
        "platform",
        "kubernetes",
        "k8s",
        "k8s_version",
        "kubernetes_version",
        "container",
    ),
    "cloud": ("cloud", "provider", "cloud_provider", "hosting", "region"),
}
_VERSIONED = {"language", "framework", "runtime"}


def _texts(env: Any, prefix: str = "") -> Iterable[tuple[str, str]]:
    """(key path, lowercase text) pairs of every scalar in the env, keys included as text."""
    if isinstance(env, dict):
        for k, v in env.items():
            key = f"{prefix}{str(k).lower()}"
            if isinstance(v, (dict, list)):
                yield from _texts(v, key + ".")
            elif v is not None and not isinstance(v, bool):
                yield key, f"{str(k).lower()} {str(v).lower()}"
            elif v is True:
                yield key, str(k).lower()
    elif isinstance(env, list):
        for item in env:
            yield from _texts(item, prefix)
    elif env is not None:
        yield prefix, str(env).lower()


# Names too common in prose to trust outside a key that is about them ("let us go", "next step").
_AMBIGUOUS = frozenset(
    {
        "go",
        "py",
        "node",
        "next",
        "nest",
        "kind",
        "host",
        "vm",
        "functions",
        "container",
        "containers",
        "compose",
        "arch",
        "bare",
        "gin",
        "express",
        "spring",
        "react",
        "vue",
        "amazon",
    }
)


def _find(families: dict[str, list[str]], text: str, *, strict: bool) -> tuple[str, int] | None:
    """The family named earliest in `text`, and where its name ends (versions follow it)."""
    best: tuple[str, int, int] | None = None
    for family, names in families.items():
        for name in names:
            if strict and name in _AMBIGUOUS:
                continue
            m = re.search(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z])", text)
            if m and (best is None or m.start() < best[1]):
                best = (family, m.start(), m.end())
    return (best[0], best[2]) if best else None


def _major(text: str, after: int) -> str:
    m = re.search(r"v?(\d+)(?:\.\d+)*", text[after:])
    return m.group(1) if m else ""


def _component(component: str, families: dict[str, list[str]], pairs: list[tuple[str, str]]) -> str:
    preferred = [t for k, t in pairs if k.split(".")[-1] in _KEYS[component]]
    others = [t for k, t in pairs if k.split(".")[-1] not in _KEYS[component]]
    for text, strict in [(t, False) for t in preferred] + [(t, True) for t in others]:
        found = _find(families, text, strict=strict)
        if found:
            family, at = found
            if component in _VERSIONED:
                version = _major(text, at)
                if not version and component == "runtime" and family == "k8s":
                    version = next((_major(t, 0) for t in preferred if "kube" in t or "k8s" in t), "")
                return f"{family}{version}"
            return family
    return ANY


def canonical_bucket(env: dict[str, Any]) -> str:
    """`os|language|framework|runtime|cloud` for a free-form env, e.g. `linux|py3|django4|k8s1|aws`."""
    pairs = list(_texts(env))
    parts = {
        "os": _component("os", _OS, pairs),
        "language": _component("language", _LANGUAGES, pairs),
        "framework": _component("framework", _FRAMEWORKS, pairs),
        "runtime": _component("runtime", _RUNTIMES, pairs),
        "cloud": _component("cloud", _CLOUDS, pairs),
    }
    if parts["os"] == ANY and parts["runtime"].startswith(("k8s", "docker")):
        parts["os"] = "linux"  # containers and Kubernetes nodes run Linux unless told otherwise
    return "|".join(parts[c] for c in COMPONENTS)


_FAMILIES = {"os": _OS, "language": _LANGUAGES, "framework": _FRAMEWORKS, "runtime": _RUNTIMES, "cloud": _CLOUDS}


def is_bucket(value: str) -> bool:
    """Five components, each `any` or a family canonical_bucket can produce (with a major version where it
    keeps one): `linux|py3|django4|k8s1|aws` is a bucket, `garbage` or `linux|klingon9|...` is not."""
    if not _BUCKET.match(value):
        return False
    return all(_known(component, part) for component, part in zip(COMPONENTS, value.split("|"), strict=True))


def _known(component: str, part: str) -> bool:
    if part == ANY:
        return True
    family = re.sub(r"\d+$", "", part) if component in _VERSIONED else part
    return family in _FAMILIES[component]


def bucket_problem(value: str) -> str | None:
    """Why an explicit bucket is refused, naming the allowed values; None when it is a bucket."""
    parts = value.split("|")
    if len(parts) != len(COMPONENTS) or not _BUCKET.match(value):
        return (
            "an env bucket is os|language|framework|runtime|cloud (five parts, e.g. linux|py3|django4|k8s1|aws;"
            " missing trailing parts are any)"
        )
    for component, part in zip(COMPONENTS, parts, strict=True):
        if not _known(component, part):
            version = " followed by a major version" if component in _VERSIONED else ""
            return f"{component} {part!r} is not one of any, {', '.join(_FAMILIES[component])}{version}"
    return None


def normalize_bucket(value: str) -> str:
    """An explicit bucket from a caller, lowercased; missing trailing parts become `any` (extra parts are kept,
    for is_bucket to refuse rather than to drop silently)."""
    parts = [p.strip().lower() or ANY for p in value.split("|")]
    parts += [ANY] * (len(COMPONENTS) - len(parts))
    return "|".join(parts)


def _family(value: str) -> str:
    return re.sub(r"\d+$", "", value)


def component_similarity(a: str, b: str) -> float:
    if a == b and a != ANY:
        return 1.0
    if ANY in (a, b):
        return 0.5
    if _family(a) == _family(b):
        return 0.5
    return 0.0


def similarity(a: str, b: str) -> float:
    """Weighted similarity of two buckets in [0, 1]."""
    pa, pb = a.split("|"), b.split("|")
    return round(sum(WEIGHTS[c] * component_similarity(x, y) for c, x, y in zip(COMPONENTS, pa, pb, strict=False)), 4)

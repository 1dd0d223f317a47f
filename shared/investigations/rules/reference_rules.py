"""References that lead nowhere: an object that refers to one that does not exist, a name one typo away from an
existing one, a Service whose selector matches no pod, a host the logs cannot resolve that a ConfigMap configures."""

from __future__ import annotations

import difflib
import re

from shared.investigations.rules import parse
from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.log_leads import not_found_names
from shared.investigations.rules.planner import Walk
from shared.investigations.rules.state import CallRecord, Finding
from shared.investigations.rules.toolshape import Role

# How a dangling reference is mended, by the kind that is missing.
_MEND = {
    "StorageClass": "create the StorageClass `{name}` (with a working provisioner) or set the claim's "
    "storageClassName to a class that exists (`kubectl get storageclass`)",
    "Service": "create the Service `{name}` or fix the name that points at it",
    "ConfigMap": "create the ConfigMap `{name}` in the namespace or fix its name in the pod spec",
    "PersistentVolumeClaim": "create the PersistentVolumeClaim `{name}` or fix claimName in the pod spec",
    "IngressClass": "install the ingress controller for class `{name}` or set ingressClassName to an installed class",
    "ServiceAccount": "create the ServiceAccount `{name}` or fix serviceAccountName",
}


def service_selectors(ctx: Context) -> list[Finding]:
    """A Service whose selector matches no pod (no endpoints): which label differs from the pods it should select."""
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind != "Service" or s.role is not Role.DESCRIBE:
            continue
        selector = parse.field_value(s.rec.output, "Selector")
        endpoints = parse.field_value(s.rec.output, "Endpoints")
        if "=" not in selector or endpoints not in ("", "<none>"):
            continue
        wanted = dict(p.split("=", 1) for p in selector.split(",") if "=" in p)
        listed = [x for x in ctx.seen if x.role is Role.POD_LIST or (x.role is Role.LIST and x.kind == "Pod")]
        if any(
            x.labels == selector and any(parse.carries(r, wanted) for r in parse.table(x.rec.output)) for x in listed
        ):
            continue  # pods carry the selector's labels: they are not ready (service_no_endpoints says so)
        near: list[tuple[parse.Row, dict[str, str], CallRecord]] = []
        for listing in ctx.lists:
            if listing.args.get("namespace") not in (None, s.namespace):
                continue
            for row in parse.table(listing.output):
                labels = dict(p.split("=", 1) for p in row.get("LABELS").split(",") if "=" in p)
                if labels and not all(labels.get(k) == v for k, v in wanted.items()):
                    shared = [k for k, v in wanted.items() if labels.get(k) == v]
                    if shared:
                        near.append((row, labels, listing))
        differ = sorted(
            {f"{k}={labels.get(k, '<unset>')}" for _, labels, _ in near for k in wanted if labels.get(k) != wanted[k]}
        )
        cause = f"Service {s.name} has no endpoints: its selector `{selector}` matches no pod"
        if near:
            cause += f"; the pods it should select have {', '.join(differ)} instead (e.g. pod {near[0][0].get('NAME')})"
        out.append(
            Finding(
                rule="service_selector",
                subject=s.name,
                cause=cause + ", so connections to the Service fail.",
                evidence=[ev(s.rec, f"Selector: {selector}"), ev(s.rec, f"Endpoints: {endpoints or '<none>'}")]
                + ([ev(near[0][2], near[0][0].line.strip())] if near else []),
                remediation=[
                    f"Make Service {s.name}'s selector match the pods' labels"
                    + (f" ({', '.join(differ)})" if differ else "")
                    + ", or label the pods as the selector expects; then check `kubectl get endpoints "
                    + s.name
                    + "` lists them."
                ],
                confidence=0.85,
            )
        )
    return out


_NAME_COLUMN = re.compile(r"^[ \t-]*(?:name|Name|NAME):[ \t]+['\"]?([a-z0-9][-a-z0-9.]{0,252})")


def near_miss_names(ctx: Context) -> list[Finding]:
    """`<kind> "x" not found` where an object of almost the same name exists: a typo in a reference."""
    said = [(rec, m) for rec in ctx.state.calls if not rec.is_error for m in not_found_names(rec.output[:200_000])]
    if not said:
        return []  # no output names a missing object: nothing to compare (and no names to collect)
    known: set[str] = set()
    for rec in ctx.state.calls:
        if rec.is_error:
            continue
        known |= {r.get("NAME") for r in parse.table(rec.output[:200_000]) if r.get("NAME")}
        known |= {m.group(1) for line in rec.output[:200_000].splitlines() if (m := _NAME_COLUMN.match(line))}
    out: list[Finding] = []
    # Bounded: a hostile output can name thousands of missing objects and list thousands of names.
    names = sorted(known)[:5_000]
    tried: set[str] = set()
    for rec, hit in said:  # our own call's not-found (is_error) is not a reference someone wrote: left out above
        plural, missing, matched = hit
        if missing in known or missing in tried or plural.split(".")[0] in ("pods", "pod", "replicasets"):
            continue
        if len(tried) >= 10:
            break
        tried.add(missing)
        # A pod's name extends its ReplicaSet's: a longer name that starts with the missing one is another object.
        others = [n for n in names if n != missing and not n.startswith(missing + "-")]
        close = difflib.get_close_matches(missing, others, n=1, cutoff=0.85)
        if not close:
            continue
        line = parse.line_matching(rec.output, re.escape(missing) + r".{0,4} not found")
        out.append(
            Finding(
                rule="name_typo",
                subject=missing,
                cause=f'{plural} "{missing}" is not found, but "{close[0]}" exists: the reference to {missing} '
                f"is a typo for {close[0]}.",
                evidence=[ev(rec, line or matched)],
                remediation=[
                    (
                        f"Fix the name: replace `{missing}` with `{close[0]}` where it is referenced "
                        "(manifest, values, pod spec), then sync or roll out again."
                    )
                ],
                confidence=0.85,
            )
        )
    return out


_CONTROLLERS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"})
_OWNED = frozenset({"ReplicaSet", "Pod", "Job", "Endpoints"})


def missing_references(ctx: Context) -> list[Finding]:
    """An object that another one refers to and that does not exist: a claim's storage class, an ingress's
    service, an HPA's target, a pod's config map or claim."""
    walk = Walk.of(ctx.state)
    walk.explore()
    out: list[Finding] = []
    for s in walk.seen:
        child = s.obj()
        parent = walk.parents.get(child) if child is not None else None
        if child is None or parent is None or not s.rec.is_error or "not found" not in s.rec.output.lower():
            continue
        if child.kind in _OWNED or (parent.kind == "Pod" and child.kind in _CONTROLLERS):
            # A pod's controller exists while the pod does; a controller's own objects come and go (a rolled-over
            # ReplicaSet): their absence says little.
            continue
        # The parent's own output naming the child next to a failure corroborates the absence.
        parent_out = walk.described[parent].output if parent in walk.described else ""
        # Logs that fail to reach the missing object (by name) corroborate it as well as the parent's own output.
        parent_out += "\n".join(
            x.rec.output[-100_000:] for x in walk.seen if x.role is Role.POD_LOG and not x.rec.is_error
        )
        # The name as a whole name (`nginx` is not named by `ingress-nginx`).
        named = re.compile(rf"(?<![-\w.]){re.escape(child.name)}(?![-\w])")
        told = any(
            named.search(line)
            and re.search(r"(?i)not found|missing|does not exist|invalid|unknown|no such host|resolve|NXDOMAIN", line)
            for line in parent_out.splitlines()
        )
        mend = _MEND.get(child.kind, "create {kind} `{name}` or fix the reference to it in {parent}")
        out.append(
            Finding(
                rule="missing_reference",
                subject=child.name,
                cause=f"{parent.kind} {parent.name} refers to {child.kind} {child.name}, which does not exist "
                f"(not found), so {parent.kind} {parent.name} cannot work.",
                evidence=[ev(s.rec, s.rec.output.strip().splitlines()[0] if s.rec.output.strip() else "not found")],
                remediation=[mend.format(kind=child.kind, name=child.name, parent=f"{parent.kind} {parent.name}")],
                # Unconfirmed, an object that is not found may only be out of this tool's reach (another
                # namespace, a name the output shortened): below what the outputs say outright.
                confidence=0.85 if told else 0.35,
            )
        )
    return out


_UNRESOLVED_HOST = re.compile(
    r"(?i)(?:host='|resolve '|lookup |resolve host:? |getaddrinfo \w+ )([a-z0-9][-a-z0-9.]{0,252})|"
    r"([a-z0-9][-a-z0-9.]{0,252}): (?:Name or service not known|no such host|Temporary failure)"
)


def configured_hosts(ctx: Context) -> list[Finding]:
    """A host the logs cannot resolve, configured in a ConfigMap (or the pod's env): where to fix it."""
    bad: dict[str, tuple[CallRecord, str]] = {}
    for log in ctx.logs:
        for line in log.output[-100_000:].splitlines()[-500:]:
            if not re.search(r"(?i)resolv|NameResolution|no such host|not known|getaddrinfo", line):
                continue
            for m in _UNRESOLVED_HOST.finditer(line[:1000]):
                host = (m.group(1) or m.group(2) or "").rstrip(".")
                if host and host not in bad and not re.fullmatch(r"[\d.]+", host):
                    bad[host] = (log, line.strip())
    services = sorted(
        {
            r.get("NAME")
            for s in ctx.seen
            if s.kind == "Service" and s.role is Role.LIST
            for r in parse.table(s.rec.output)
        }
        - {""}
    )
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind not in ("ConfigMap", "Pod") or s.role not in (Role.DESCRIBE, Role.POD_GET) or s.rec.is_error:
            continue
        for host, (log, said) in bad.items():
            line = parse.line_matching(s.rec.output[:200_000], rf"(?<![-\w.]){re.escape(host)}(?![-\w])")
            if not line or line == said:
                continue
            key = _key_of(s.rec.output[:200_000], line)
            where = f"{s.kind} {s.name}"
            change = f"update {key} in {where}" if key else f"fix the host in {where}"
            hint = f" (Services in the namespace: {', '.join(services[:6])})" if services else ""
            out.append(
                Finding(
                    rule="configured_bad_host",
                    subject=s.name,
                    cause=f"The host `{host}` that the logs cannot resolve is configured in {where}"
                    + (f" ({key})" if key else "")
                    + f": `{line[:160]}`; "
                    "no Service of that name answers.",
                    evidence=[ev(s.rec, line), ev(log, said)],
                    remediation=[
                        (
                            f"{change} to point at the Service the app should call{hint}, then restart the pods "
                            "(environment from a ConfigMap is read at start)"
                        )
                    ],
                    confidence=0.85,
                )
            )
    return out


_KEY_LINE = re.compile(r"^[ \t]*[\"']?([A-Za-z_][\w.-]{0,100})[\"']?:(?:[ \t]|$)")


def _key_of(output: str, line: str) -> str:
    """The setting a value belongs to: `KEY: value` on its own line (YAML, env), or in a ConfigMap's description
    the `KEY:` line above the `----` that precedes the value."""
    same = _KEY_LINE.match(line)
    if same and line.split(":", 1)[1].strip():
        return same.group(1)
    lines = output.splitlines()
    try:
        at = [x.strip() for x in lines].index(line.strip())
    except ValueError:
        return ""
    for back in range(at - 1, max(-1, at - 30), -1):
        prev = lines[back].strip()
        if prev and set(prev) != {"-"} and prev.endswith(":") and " " not in prev:
            return prev[:-1]
        if prev and set(prev) != {"-"}:
            return ""
    return ""

"""What logs (and not-found errors) point at: a cluster name that does not resolve, a `host:port` that refuses or
times out, a service account the API refuses, a `<kind> "x" not found`; each becomes an object for the planner to
look at."""

from __future__ import annotations

import itertools
import re
from typing import NamedTuple

from shared.investigations.rules import parse
from shared.investigations.rules.auth_clients import failing_clients
from shared.investigations.rules.memo import remembered
from shared.investigations.rules.objects import ObjRef, kind_of
from shared.investigations.rules.rbac import Denial, denials
from shared.investigations.rules.state import ToolCall
from shared.investigations.rules.toolshape import Role
from shared.investigations.rules.walk_graph import WalkGraph

DNS_ERROR = re.compile(
    r"(?i)NameResolutionError|Failed to resolve|Temporary failure in name resolution|NXDOMAIN|no such host|"
    r"could not resolve host|Name or service not known|getaddrinfo|server misbehaving"
)
# The name starts where the dotted name starts (`\b` also after each `-` or `.` inside it, and each such start
# rescanned the rest: quadratic).
_HOST_PORT = re.compile(r"(?<![-.\w/@])([a-z][-a-z0-9]*(?:\.[-a-z0-9]+)*):(\d{2,5})\b")
TIMEOUTS = re.compile(r"(?i)connection time ?out|connect(?:ion)? timed out|i/o timeout|ETIMEDOUT")
_CONNECT = re.compile(r"(?i)connect|connection|refused|timed? ?out|unreachable|no route")
# `namespaces "x" not found`, `configmap "x" not found`, `services "x" not found` (API and kubelet wording).
# A kind starts where its word starts (after anything but a letter or a dot: from every letter of a long dotted
# run, the kind's `{1,60}` rescanned the run).
NOT_FOUND = re.compile(r"(?<![a-z.])([a-z][a-z.]{1,60}) \\?\"([a-z0-9][-a-z0-9.]{0,252})\\?\" not found")


@remembered
def not_found_names(text: str) -> tuple[tuple[str, str, str], ...]:
    """`(kind word, name, the matched text)` of each `<kind> "name" not found` in an output, at most 50, read
    once per output (the walk and the rules ask at every iteration)."""
    return tuple((m.group(1), m.group(2), m.group(0)) for m in itertools.islice(NOT_FOUND.finditer(text), 50))


# `name.svc.cluster.local` names in lines that failed to resolve: `[pod.]service.namespace.svc[.cluster.local]`.
_CLUSTER_NAME = re.compile(r"(?<![-\w.])(?:[a-z0-9][-a-z0-9]*\.)?([a-z0-9][-a-z0-9]*)\.([a-z0-9][-a-z0-9]*)\.svc\b")
_UNRESOLVED = re.compile(
    r"(?i)UnknownHost|no such host|NXDOMAIN|could not resolve|not resolve|Name or service not known|"
    r"Temporary failure in name resolution|getaddrinfo"
)


# A binding's role: `Role:\n  Kind:  ClusterRole\n  Name:  x` (describe) or `roleRef: ... name: x` (YAML).
_KIND_CLUSTER_ROLE = re.compile(r"^[ \t]*[Kk]ind:[ \t]*ClusterRole[ \t]*$")
_NAME_LINE = re.compile(r"^[ \t]*[Nn]ame:[ \t]*([a-z0-9][-a-z0-9.:]{0,252})[ \t]*$")


def cluster_role_of(binding: str) -> str:
    """A binding's ClusterRole: `Kind:  ClusterRole` next to `Name:  x` (describe's Role block, YAML's roleRef)."""
    lines = binding[:50_000].splitlines()
    for i, line in enumerate(lines[:-1]):
        if _KIND_CLUSTER_ROLE.match(line) and (m := _NAME_LINE.match(lines[i + 1])):
            return m.group(1)
        if _KIND_CLUSTER_ROLE.match(lines[i + 1]) and (m := _NAME_LINE.match(line)):
            return m.group(1)  # YAML may write the name before the kind
    return ""


class LogLeads(WalkGraph):
    """The objects the logs and not-found errors name, described and chained to the output that named them."""

    def from_logs(self) -> list[ToolCall]:
        """What logs point at: cluster names that do not resolve and hosts that refuse or time out -> that
        Service; DNS failures -> the namespace's NetworkPolicies (and each policy)."""
        calls: list[ToolCall] = []
        for s in self.seen:
            ns = s.namespace or self.target.namespace
            if s.role is not Role.POD_LOG or s.rec.is_error or not ns:
                continue
            out = s.rec.output[-200_000:]
            pod = ObjRef("Pod", s.name, s.namespace)
            facts = log_facts(out, ns)
            if facts.unreachable:
                # Where does it get the name it cannot reach? Its spec (env, ConfigMaps) says.
                calls += self._lead(pod, pod, f"pod {pod.name} cannot reach a name: where is it configured?")
            for svc in facts.cluster_names[:2]:
                calls += self._lead(
                    svc, pod, f"the logs cannot resolve {svc.name}.{svc.namespace}: is there a Service?"
                )
            if facts.unreachable:
                calls += self._call(
                    Role.LIST, "connections or DNS lookups fail: does a NetworkPolicy drop the traffic?",
                    api_version="networking.k8s.io/v1", kind="NetworkPolicy", namespace=ns,
                )  # fmt: skip
            calls += self.rbac(facts.denials)
            for ip, _ in failing_clients(out):
                # Which pod has that address? Its workload and age say whose credentials are stale.
                calls += self._call(Role.POD_LIST_ALL, f"which pod logs in from {ip}?", fields=f"status.podIP={ip}")
            target = facts.service
            if target is not None:
                svc, host = target
                calls += self._lead(svc, pod, f"does the service {host} the logs cannot reach exist?")
                calls += self._call(
                    Role.LIST, "services of the namespace", api_version="v1", kind="Service", namespace=svc.namespace
                )
        for s in self.seen:
            if s.role is Role.LIST and s.kind == "NetworkPolicy" and not s.rec.is_error and s.namespace:
                for row in parse.table(s.rec.output)[:3]:
                    if row.get("NAME"):
                        calls += self.look_at(ObjRef("NetworkPolicy", row.get("NAME"), s.namespace), "read the policy")
        return calls

    def rbac(self, refused: tuple[Denial, ...]) -> list[ToolCall]:
        """A service account the API refuses: the namespace's RoleBindings, then the bindings and Roles they name."""
        calls: list[ToolCall] = []
        for d in refused[:1]:
            why = f"which Role does {d.account} have? it may not {d.verb} {d.resource}"
            calls += self._call(Role.LIST, why, api_version="rbac.authorization.k8s.io/v1", kind="RoleBinding",
                                namespace=d.namespace)  # fmt: skip
            for s in self.seen:
                if s.role is not Role.LIST or s.kind != "RoleBinding" or s.rec.is_error:
                    continue
                for row in parse.table(s.rec.output)[:3]:
                    binding = ObjRef("RoleBinding", row.get("NAME"), d.namespace)
                    calls += self._lead(binding, ObjRef("ServiceAccount", d.account, d.namespace), why)
                    kind, _, name = row.get("ROLE").partition("/")
                    role = ObjRef(kind, name, d.namespace if kind == "Role" else None) if name else None
                    if role is not None:
                        calls += self._lead(role, binding, f"the verbs {binding.name} grants")
            if d.cluster:
                calls += self._cluster_bindings(d, why)
        return calls

    def _cluster_bindings(self, d: Denial, why: str) -> list[ToolCall]:
        """A refusal at the cluster scope: the ClusterRoleBindings, the one naming the account, its ClusterRole."""
        account = ObjRef("ServiceAccount", d.account, d.namespace)
        # Charts name the binding after the account; the listing finds it when they do not.
        calls = self._lead(ObjRef("ClusterRoleBinding", d.account), account, why)
        calls += self._call(Role.LIST, why, api_version="rbac.authorization.k8s.io/v1", kind="ClusterRoleBinding")
        for s in self.seen:
            if s.kind == "ClusterRoleBinding" and s.role is Role.DESCRIBE and not s.rec.is_error:
                role = cluster_role_of(s.rec.output)
                if role:
                    binding = ObjRef("ClusterRoleBinding", s.name)
                    calls += self._lead(ObjRef("ClusterRole", role), binding, f"the verbs {s.name} grants")
        subject = f"{d.namespace}/{d.account}"
        for s in self.seen:
            if s.role is not Role.LIST or s.kind != "ClusterRoleBinding" or s.rec.is_error:
                continue
            rows = parse.table(s.rec.output[:400_000])
            mine = [r for r in rows if subject in r.get("SERVICEACCOUNTS").split(",")] or [
                r for r in rows if r.get("NAME") == d.account
            ]
            for row in mine[:2]:
                binding = ObjRef("ClusterRoleBinding", row.get("NAME"))
                calls += self._lead(binding, account, why)
                kind, _, name = row.get("ROLE").partition("/")
                if kind == "ClusterRole" and name:
                    calls += self._lead(ObjRef("ClusterRole", name), binding, f"the verbs {binding.name} grants")
        return calls

    def _lead(self, obj: ObjRef, found_by: ObjRef, why: str) -> list[ToolCall]:
        """An object a log names: described, walked on from, and chained to the pod whose log named it."""
        if obj not in self.extra_seeds:
            self.extra_seeds.append(obj)
            self.parents.setdefault(obj, found_by)
        return self.look_at(obj, why)

    def missing_names(self) -> list[ToolCall]:
        """An output says `<kind> "x" not found` (a sync error, a mount, an env reference): list that kind where
        it should be, so a name that is close to an existing one shows up as a typo."""
        calls: list[ToolCall] = []
        for s in self.seen:
            if s.rec.is_error:
                continue
            for plural, name, _ in not_found_names(s.rec.output[:200_000])[:3]:
                k = kind_of(plural.split(".")[0])
                if k is None or k.name in ("Pod", "ReplicaSet"):
                    continue
                if k.name == "Namespace":
                    why = f"namespace {name} is not found: which ones exist?"
                    calls += self._call(Role.NAMESPACES, why) or self._call(
                        Role.LIST, why, api_version="v1", kind="Namespace"
                    )
                elif s.namespace or self.target.namespace:
                    ns = s.namespace or self.target.namespace
                    calls += self._call(Role.LIST, f"{k.name} {name} is not found: which ones exist in {ns}?",
                                        api_version=k.api_version, kind=k.name, namespace=ns)  # fmt: skip
        return calls


class LogFacts(NamedTuple):
    """What one log points at, read once per log text (the walk asks again at every iteration)."""

    unreachable: bool  # a name that does not resolve, or a connection that times out
    cluster_names: tuple[ObjRef, ...]
    denials: tuple[Denial, ...]
    service: tuple[ObjRef, str] | None


@remembered
def log_facts(log: str, ns: str) -> LogFacts:
    """The leads in one log: unresolvable cluster names, RBAC refusals, the first unreachable host's Service."""
    unreachable = bool(DNS_ERROR.search(log) or TIMEOUTS.search(log))
    return LogFacts(unreachable, tuple(_cluster_names(log, ns)), tuple(denials(log)), _unreachable_service(log, ns))


def _cluster_names(log: str, ns: str) -> list[ObjRef]:
    """Services whose cluster DNS names the log could not resolve."""
    found: list[ObjRef] = []
    for line in log.splitlines()[-500:]:
        if not _UNRESOLVED.search(line):
            continue
        for m in _CLUSTER_NAME.finditer(line[:1000]):
            svc = ObjRef("Service", m.group(1), m.group(2) or ns)
            if svc not in found:
                found.append(svc)
    return found


def _unreachable_service(log: str, ns: str) -> tuple[ObjRef, str] | None:
    """The Service behind the first `host:port` a log fails to connect to (refused, timed out, unreachable)."""
    for line in log.splitlines()[-300:]:
        if not _CONNECT.search(line):
            continue
        m = _HOST_PORT.search(line)
        if m and not re.fullmatch(r"[\d.]+", m.group(1)) and m.group(1) not in ("localhost", "http", "https"):
            host = m.group(1).split(".")
            # `svc.ns.svc...` names a Service; `pod.svc.ns.svc...` a pod behind its governing Service.
            at = 1 if host[3:4] == ["svc"] else 0
            svc_ns = host[at + 1] if host[at + 2 : at + 3] == ["svc"] else ns
            return ObjRef("Service", host[at], svc_ns), m.group(1)
    return None

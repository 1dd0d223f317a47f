"""What a Kubernetes message (event, condition, container state) means and the fix it points to.

Keyed on the wording Kubernetes, kubelet, the scheduler and the container runtimes use, never on an alert's name; the
fix names what the message names (the image, the missing Secret, the quota and its numbers). Patterns are linear:
literal anchors, bounded character classes, and names that start where their run of name characters starts.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from shared.investigations.rules.vocabulary import KNOWN_COMMANDS


@dataclass
class Meaning:
    """Why the message matters (a clause that completes "because ...") and the fixes it implies."""

    why: str
    fixes: list[str] = field(default_factory=list)
    cause: bool = True  # False: the message says what happens (a back-off, a restart), not why
    confidence: float = 0.75


@dataclass
class About:
    """The object the message is about, to name it in the fix."""

    kind: str
    name: str
    namespace: str = ""


_Rule = tuple[re.Pattern[str], Callable[[re.Match[str], About], Meaning]]

_N = r"(?<![-\w.])"  # a name starts where its run of name characters starts


def _insufficient(m: re.Match[str], a: About) -> Meaning:
    res = m.group(1).rstrip(".")  # the scheduler ends the sentence right after the resource name
    return Meaning(
        f"no node has enough free {res} for the pod's requests (Insufficient {res})",
        [f"Lower the {res} request of {a.name}'s containers, or add nodes (or free capacity) with enough {res}."],
    )


def _taint(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"the nodes carry a taint the pod does not tolerate ({{{m.group(1)}}})",
        [
            (
                f"Add a toleration for the taint {{{m.group(1)}}} to {a.name}'s pod spec, or remove it from a node "
                "that "
                "should run it."
            )
        ],
    )


def _affinity(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "no node matches the pod's nodeSelector/node affinity",
        [f"Fix the nodeSelector/affinity of {a.name} to labels a node has, or label a node to match it."],
    )


def _too_many_pods(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "the nodes are at their maximum pod count (Too many pods)",
        ["Add nodes (or raise the kubelet's maxPods where the network plugin allows it), or remove unneeded pods."],
    )


def _unbound_claim(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "the pod's PersistentVolumeClaim is not bound to a volume",
        ["Look at the claim's events: make its StorageClass exist and provision, or create a matching volume."],
    )


def _volume_zone(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "its volume is pinned to a zone or node where the pod cannot run (volume node affinity conflict)",
        ["Run the pod where its volume is (node affinity/zone), or re-create the volume in the nodes' zone."],
    )


def _unschedulable_nodes(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "the nodes are cordoned (unschedulable)",
        ["Uncordon the nodes once their maintenance is over (`kubectl uncordon NODE`), or add nodes."],
    )


def _tail(text: str, size: int = 160) -> str:
    """The end of a long runtime error: its last clause is the most specific (`401 Unauthorized`, `not found`)."""
    return text if len(text) <= size else "..." + text[-size:]


def _pull(m: re.Match[str], a: About) -> Meaning:
    image, detail = m.group(1), _tail(m.group(2))
    low = detail.lower()
    if any(w in low for w in ("denied", "unauthorized", "authentication required", "forbidden", "401", "403")):
        return Meaning(
            f"the registry refuses to serve `{image}` to the node ({detail})",
            [
                (
                    f"Give the pod an imagePullSecret with credentials that can read `{image}` (or check the "
                    "repository "
                    "exists and its name is right)."
                )
            ],
        )
    if any(w in low for w in ("not found", "manifest unknown", "does not exist", "no such manifest")):
        return Meaning(
            f"the image `{image}` does not exist in its registry ({detail})",
            [f"Fix the image name or tag `{image}` to one that exists in the registry."],
        )
    if any(w in low for w in ("no such host", "i/o timeout", "connection refused", "timeout", "dial tcp")):
        return Meaning(
            f"the node cannot reach the registry of `{image}` ({detail})",
            [f"Check that the nodes can resolve and reach the registry of `{image}` (DNS, egress, proxy)."],
        )
    if "toomanyrequests" in low or "rate limit" in low:
        return Meaning(
            f"the registry rate-limits pulls of `{image}`",
            ["Pull with credentials (an imagePullSecret), or use a registry mirror."],
        )
    return Meaning(f"pulling `{image}` fails: {detail}", [f"Check the image reference `{image}` and the registry."])


def _missing_object(m: re.Match[str], a: About) -> Meaning:
    kind = {
        "secret": "Secret",
        "secrets": "Secret",
        "configmap": "ConfigMap",
        "configmaps": "ConfigMap",
        "serviceaccount": "ServiceAccount",
        "persistentvolumeclaim": "PersistentVolumeClaim",
        "storageclass.storage.k8s.io": "StorageClass",
    }.get(m.group(1).lower(), m.group(1))
    where = f" in namespace {a.namespace}" if a.namespace and kind != "StorageClass" else ""
    return Meaning(
        f"the {kind} `{m.group(2)}` it needs does not exist",
        [f"Create the {kind} `{m.group(2)}`{where}, or fix the name {a.name} refers to."],
        confidence=0.85,
    )


def _missing_key(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"the key `{m.group(1)}` is missing from {m.group(2)} `{m.group(3)}`",
        [f"Add the key `{m.group(1)}` to {m.group(2)} `{m.group(3)}`, or fix the key name in {a.name}'s spec."],
        confidence=0.85,
    )


def _not_found_command(m: re.Match[str], a: About) -> Meaning:
    cmd = m.group(1)
    close = difflib.get_close_matches(cmd.rsplit("/", 1)[-1], KNOWN_COMMANDS, n=1, cutoff=0.6)
    typo = f"; `{cmd}` looks like a typo for `{close[0]}`" if close and close[0] != cmd else ""
    return Meaning(
        f"the command `{cmd}` does not exist in the image (executable file not found){typo}",
        [
            f"Fix the command in the container spec: replace `{cmd}` with `{close[0]}`."
            if typo
            else f"Fix the command `{cmd}` in the container spec, or use an image that contains it."
        ],
        confidence=0.9,
    )


def _not_executable(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"`{m.group(1)}` cannot be executed (permission denied)",
        [f"Make `{m.group(1)}` executable in the image (chmod +x), or run it through its interpreter."],
        confidence=0.85,
    )


def _probe(m: re.Match[str], a: About) -> Meaning:
    probe, detail = m.group(1).lower(), m.group(2)
    low = detail.lower()
    code = re.search(r"statuscode: (\d{3})", detail)
    if code:
        what = f"the probe endpoint answers HTTP {code.group(1)}"
    elif "connection refused" in low:
        what = "nothing listens on the probe's port (wrong port, or the app is not up yet)"
    elif any(w in low for w in ("deadline exceeded", "timeout", "timed out")):
        what = "the app answers the probe slower than its timeoutSeconds"
    else:
        what = detail[:160]
    return Meaning(
        f"its {probe} probe fails: {what}",
        [
            (
                f"Check the {probe} probe's path and port against what the app serves; if the app is slow to answer, "
                "raise "
                "timeoutSeconds/initialDelaySeconds (or add a startupProbe); otherwise fix the endpoint."
            )
        ],
        confidence=0.75,
    )


def _quota(m: re.Match[str], a: About) -> Meaning:
    quota, requested, used, limited = m.group(1), m.group(2), m.group(3), m.group(4)
    return Meaning(
        f"ResourceQuota `{quota}` is exhausted (requested {requested}, used {used}, limited {limited})",
        [
            (
                f"Raise the quota (the hard limit of ResourceQuota `{quota}`, {limited}), or lower the requests / "
                "remove unused objects in the namespace."
            )
        ],
        confidence=0.85,
    )


def _quota_unspecified(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"ResourceQuota `{m.group(1)}` requires {m.group(2)} on every container and the pod does not set them",
        [f"Set {m.group(2)} on every container of {a.name}, or add a LimitRange that gives defaults."],
        confidence=0.85,
    )


def _limit_max(m: re.Match[str], a: About) -> Meaning:
    res, scope, most, asked = m.group(1), m.group(2), m.group(3), m.group(4)
    return Meaning(
        f"a LimitRange caps {res} at {most} per {scope}, and the pod asks for {asked}",
        [f"Lower the {res} limit of {a.name}'s containers to {most} or less, or raise the LimitRange's max."],
        confidence=0.85,
    )


def _limit_min(m: re.Match[str], a: About) -> Meaning:
    res, scope, least, asked = m.group(1), m.group(2), m.group(3), m.group(4)
    return Meaning(
        f"a LimitRange needs at least {least} {res} per {scope}, and the pod requests {asked}",
        [f"Raise the {res} request of {a.name}'s containers to {least} or more, or lower the LimitRange's min."],
        confidence=0.85,
    )


def _pod_security(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"the pod violates the namespace's PodSecurity level {m.group(1)} ({m.group(2)[:200]})",
        [
            (
                f"Change {a.name}'s pod spec to meet {m.group(1)} ({m.group(2)[:120]}), or change the namespace's "
                "pod-security.kubernetes.io/enforce label if that level is wrong."
            )
        ],
        confidence=0.85,
    )


def _provisioner(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"the volume is waiting for provisioner `{m.group(1)}`, which does not create it",
        [f"Check that the provisioner `{m.group(1)}` (its CSI driver pods) is installed and running."],
    )


def _no_class(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "no PersistentVolume matches the claim and it names no StorageClass",
        ["Set storageClassName on the claim (or mark a StorageClass default), or create a matching volume."],
    )


def _multi_attach(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"volume `{m.group(1)}` is still attached to another node (ReadWriteOnce)",
        [
            (
                "Let the old pod on the other node terminate (or delete it) so the volume detaches; use ReadWriteMany "
                "storage if several nodes need it."
            )
        ],
    )


def _network(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"the node's pod network is not ready ({m.group(0)[:120]})",
        ["Check the network plugin (CNI) pods on that node and its CNI configuration; restart them if they crash."],
    )


def _oom_node(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"the kernel killed `{m.group(1)}` when memory ran out",
        [f"Raise the memory limit of the container running `{m.group(1)}`, or reduce its memory use."],
    )


def _evicted(m: re.Match[str], a: About) -> Meaning:
    res = m.group(1)
    return Meaning(
        f"the node ran low on {res} and the kubelet evicted pods",
        [
            (
                f"Set {res} requests close to real use (pods above their request are evicted first), and free or add "
                f"{res} on the node."
            )
        ],
    )


def _backoff_limit(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "its pods failed until the Job reached its backoff limit",
        [f"Find why the pods of {a.name} fail (their exit codes and logs), fix that, then re-run the Job."],
        cause=False,
        confidence=0.7,
    )


def _deadline(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "it ran longer than its activeDeadlineSeconds and was stopped",
        [f"Find why {a.name} runs so long (a hang, slow dependency), or raise activeDeadlineSeconds."],
        confidence=0.75,
    )


def _missing_request(m: re.Match[str], a: About) -> Meaning:
    res = m.group(1)
    return Meaning(
        f"a container of the target's pods has no {res} request, so {res} utilization cannot be computed",
        [f"Set resources.requests.{res} on every container (sidecars included) of the pods the autoscaler scales."],
        confidence=0.85,
    )


def _no_metrics(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "the metrics API returns no metrics for the target's pods",
        [
            (
                "Check metrics-server (or the metrics adapter): that it runs, that `kubectl top pods` works, and that "
                "the "
                "APIService v1beta1.metrics.k8s.io is Available."
            )
        ],
        confidence=0.75,
    )


def _backoff(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "the container keeps exiting and the kubelet waits longer before each restart",
        ["Find why the container exits: its last state (reason, exit code) and its previous logs."],
        cause=False,
        confidence=0.5,
    )


def _missing_endpoints(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"the backend Service `{m.group(1)}` does not exist (no endpoints object)",
        [f"Create the Service `{m.group(1)}`, or fix the backend service name in {a.name}."],
        confidence=0.8,
    )


def _api_discovery(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"the aggregated API `{m.group(1)}` does not answer, so the namespace's contents cannot all be listed",
        [
            (
                f"Fix the service behind the APIService for `{m.group(1)}`, or delete that APIService if it is no "
                "longer "
                "used."
            )
        ],
    )


def _reclaim(m: re.Match[str], a: About) -> Meaning:
    res = m.group(1)
    return Meaning(
        f"the node is short of {res} and the kubelet is evicting pods to reclaim it",
        [(f"Free {res} on {a.name} (find the pods using the most), set realistic {res} requests and limits, or add "
         "nodes.")],
    )  # fmt: skip


def _order_failed(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "the certificate's issuance failed (its CertificateRequest/ACME order did not complete)",
        [(f"Read the CertificateRequest, Order and Challenge of {a.name} (`kubectl describe certificaterequest,order,"
         "challenge -n NAMESPACE`): the failing challenge says why (DNS record, HTTP-01 path unreachable, issuer "
         "account or rate limit).")],
        confidence=0.7,
    )  # fmt: skip


def _issuer_missing(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"the issuer `{m.group(1)}` it names does not exist",
        [f"Create the Issuer/ClusterIssuer `{m.group(1)}`, or fix the issuerRef of {a.name}."],
        confidence=0.85,
    )


def _cert(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"a TLS certificate is not accepted ({m.group(0)[:120]})",
        ["Renew the expired certificate (or install the issuing CA where it is checked)."],
    )


def _kubelet_down(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "the kubelet stopped reporting (node down, kubelet crashed, or the node lost its network)",
        [
            (
                f"Check that {a.name} is up and reachable and its kubelet runs (journalctl -u kubelet); drain and "
                "replace "
                "it if it does not recover."
            )
        ],
    )


def _pleg(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "the container runtime does not answer the kubelet in time (PLEG is not healthy)",
        [f"Check the container runtime on {a.name} (containerd/CRI-O), its load and disk; restart it or the node."],
    )


def _webhook_down(m: re.Match[str], a: About) -> Meaning:
    service = f" (Service {m.group(3)} in namespace {m.group(2)})" if m.group(2) else ""
    return Meaning(
        f"every create is rejected because admission webhook {m.group(1)} cannot be called: its backend{service} has "
        "no ready endpoint, and a webhook with failurePolicy: Fail blocks what it cannot reach (pods in every "
        "namespace it covers)",
        [
            (
                f"Bring the webhook's pods back (their deployment, node and events{service}); to unblock now, set "
                f"the webhook's failurePolicy to Ignore or remove its configuration temporarily "
                "(kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations)."
            )
        ],
        confidence=0.85,
    )


def _runs_as_root(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        "the pod requires a non-root user (runAsNonRoot) but the image runs as root (its USER is 0 or unset)",
        [
            (
                f"Set a non-zero runAsUser (a non-root UID the image supports) in {a.name}'s securityContext, or "
                "build the image with a numeric non-root USER instruction; do not drop runAsNonRoot to make it start."
            )
        ],
        confidence=0.85,
    )


def _forbidden_sysctl(m: re.Match[str], a: About) -> Meaning:
    return Meaning(
        f"the kubelet rejects the pod's sysctl {m.group(1)}: it is not in the safe set and not allowed on the node "
        "(unsafe sysctls need the kubelet's --allowed-unsafe-sysctls); rejected pods pile up as the controller "
        "recreates them",
        [
            (
                f"Remove {m.group(1)} from {a.name}'s securityContext.sysctls, or allow it on a dedicated node pool "
                "(kubelet --allowed-unsafe-sysctls, with a taint and toleration so only these pods land there); then "
                "delete the rejected pods."
            )
        ],
        confidence=0.85,
    )


_RULES: tuple[_Rule, ...] = (
    (re.compile(r"(?<!\w)Insufficient ([\w./-]{1,100})"), _insufficient),
    (re.compile(r"untolerated taint \{([^{}]{1,200})\}"), _taint),
    (re.compile(r"had taint \{([^{}]{1,200})\}, that the pod didn't tolerate"), _taint),
    (re.compile(r"didn't match (?:Pod's )?node affinity|didn't match node selector"), _affinity),
    (re.compile(r"(?<!\w)Too many pods"), _too_many_pods),
    (re.compile(r"unbound immediate PersistentVolumeClaims"), _unbound_claim),
    (re.compile(r"volume node affinity conflict"), _volume_zone),
    (
        re.compile(
            r'failed calling webhook \\?"([\w.-]{1,253})\\?"[^\n]{0,300}?(?:https://([a-z0-9-]{1,63})\.'
            r"([a-z0-9-]{1,63})\.svc)?[^\n]{0,300}?(?:no endpoints available|connection refused|context deadline)"
        ),
        _webhook_down,
    ),
    (re.compile(r"container has runAsNonRoot and image (?:will run|has non-numeric user)"), _runs_as_root),
    (
        re.compile(r"(?i)forbidden sysctl: \\?\"?([\w./-]{1,100})\\?\"? not (?:allowlisted|whitelisted)"),
        _forbidden_sysctl,
    ),
    (re.compile(r"node\(s\) were unschedulable"), _unschedulable_nodes),
    (re.compile(r'Failed to pull image "([^"]{1,300})": (.{1,400})'), _pull),
    (
        re.compile(
            rf"(?i){_N}(secrets?|configmaps?|serviceaccount|persistentvolumeclaim|storageclass\.storage\.k8s\.io)"
            r' "([^"]{1,253})" not found'
        ),
        _missing_object,
    ),
    (
        re.compile(r"couldn't find key ([\w.-]{1,253}) in (Secret|ConfigMap) ([\w.-]{1,253}/[\w.-]{1,253})"),
        _missing_key,
    ),
    (re.compile(r'exec: "([^"]{1,200})": executable file not found'), _not_found_command),
    (re.compile(r'exec: "([^"]{1,200})": permission denied'), _not_executable),
    (re.compile(r"(Liveness|Readiness|Startup) probe failed: (.{0,400})"), _probe),
    (
        re.compile(
            r"exceeded quota: ([\w.-]{1,253}), requested: ([^,]{1,200}), used: ([^,]{1,200}), limited: ([^\s,]{1,200})"
        ),
        _quota,
    ),
    (re.compile(r"failed quota: ([\w.-]{1,253}): must specify ([\w.,/-]{1,300})"), _quota_unspecified),
    (re.compile(r"maximum (\S{1,60}) usage per (Container|Pod) is (\S{1,60}), but limit is (\S{1,60})"), _limit_max),
    (re.compile(r"minimum (\S{1,60}) usage per (Container|Pod) is (\S{1,60}), but request is (\S{1,60})"), _limit_min),
    (re.compile(r'violates PodSecurity "([^"]{1,60})": (.{1,400})'), _pod_security),
    (
        re.compile(r'waiting for a volume to be created,? either by (?:the )?external provisioner "([^"]{1,200})"'),
        _provisioner,
    ),
    (re.compile(r"no persistent volumes available for this claim and no storage class is set"), _no_class),
    (re.compile(r'Multi-Attach error for volume "([^"]{1,253})"'), _multi_attach),
    (
        re.compile(r"(?i)network plugin (?:is )?not ready|cni plugin not initialized|failed to set ?up network"),
        _network,
    ),
    (re.compile(r"Killed process \d{1,10} \(([^)]{1,100})\)"), _oom_node),
    (re.compile(r"victim process: ([^,\s]{1,100})"), _oom_node),
    (re.compile(r"The node was low on resource: (\w{1,40})"), _evicted),
    (re.compile(r"(?i)reached the specified backoff limit"), _backoff_limit),
    (re.compile(r"(?i)active longer than specified deadline|DeadlineExceeded"), _deadline),
    (re.compile(r"missing request for (\w{1,40})"), _missing_request),
    (
        re.compile(
            r"no metrics returned from resource metrics API|unable to fetch metrics from resource metrics API|"
            r"unable to get metrics for resource|the server could not find the requested resource \(get pods\.metrics"
        ),
        _no_metrics,
    ),
    (re.compile(r"Back-off restarting failed container"), _backoff),
    (re.compile(r'<error: endpoints "([^"]{1,253})" not found>'), _missing_endpoints),
    (re.compile(r"unable to retrieve the complete list of server APIs: ([\w.-]{1,253}/\w{1,40})"), _api_discovery),
    (re.compile(r"Attempting to reclaim (\w{1,40})"), _reclaim),
    (re.compile(r'order is in "(?:invalid|errored)" state|certificate request has failed to complete'), _order_failed),
    (re.compile(r'(?:issuer|Issuer|ClusterIssuer)(?:\.cert-manager\.io)? "([^"]{1,253})" not found'), _issuer_missing),
    (re.compile(r"x509: certificate has expired or is not yet valid|certificate signed by unknown authority"), _cert),
    (re.compile(r"Kubelet stopped posting node status"), _kubelet_down),
    (re.compile(r"PLEG is not healthy"), _pleg),
)


def meaning(message: str, about: About) -> Meaning | None:
    """What the first recognised phrase of a message means, or None when no phrase is known."""
    text = message[:4000]
    for rx, explain in _RULES:
        m = rx.search(text)
        if m:
            return explain(m, about)
    return None

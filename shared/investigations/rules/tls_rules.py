"""An HTTPS probe that fails at an Ingress whose backend answers: the certificate is the suspect. Investigations
never read Secrets (their data would be recorded), so the TLS Secret the Ingress names is reported for a person
to check, with what to do when it is missing or wrong."""

from __future__ import annotations

from shared.investigations.rules.context import Context, ev
from shared.investigations.rules.object_state import read_object
from shared.investigations.rules.objects import alert_objects
from shared.investigations.rules.state import Finding
from shared.investigations.rules.toolshape import Role


def _https(ctx: Context) -> bool:
    alert = ctx.state.alert
    text = " ".join(str(v) for v in (alert.get("labels") or {}).values())
    text += " " + " ".join(str(v) for v in (alert.get("annotations") or {}).values())
    return "https://" in text.lower() or "ssl" in text.lower() or "tls" in text.lower()


def unverified_tls_secrets(ctx: Context) -> list[Finding]:
    """The TLS Secret of the Ingress serving a probed HTTPS host whose backends have endpoints."""
    hosts = set(alert_objects(ctx.state.alert).hosts)
    if not hosts or not _https(ctx):
        return []
    out: list[Finding] = []
    for s in ctx.seen:
        if s.kind != "Ingress" or s.role is not Role.DESCRIBE or s.rec.is_error:
            continue
        view = read_object(s.rec.output[:200_000], "Ingress")
        served = [b for b in view.backends if b.host in hosts or not b.host]
        answering = [b for b in served if b.endpoints and "error" not in b.endpoints and b.endpoints != "<none>"]
        secrets = [r.name for r in view.refs if r.kind == "Secret" and "TLS" in r.relation]
        if not served or not answering or not secrets:
            continue
        secret, host = secrets[0], next(iter(sorted(hosts)))
        line = next((ln.strip() for ln in s.rec.output.splitlines() if secret in ln), secret)
        backend = answering[0]
        out.append(
            Finding(
                rule="tls_secret_unverified",
                subject=secret,
                cause=f"Ingress {s.name} terminates TLS for {host} with Secret {secret}, and its backend answers "
                f"(Service {backend.service}: {backend.endpoints}); an HTTPS probe that fails there points at the "
                f"certificate: Secret {secret} missing (the controller then serves its default, untrusted "
                "certificate), expired, or not for this host. Investigations do not read Secrets: check it.",
                evidence=[ev(s.rec, line)] + ([ev(s.rec, backend.quote)] if backend.quote else []),
                remediation=[
                    (
                        f"Check the Secret: `kubectl get secret {secret} -n {s.namespace}` and its certificate's "
                        f"dates and names; if it is missing, create it (or point the Ingress's tls.secretName back "
                        "at the existing certificate Secret); if it expired, renew it; the ingress controller's "
                        "logs name the certificate it could not load."
                    )
                ],
                confidence=0.5,
            )
        )
    return out

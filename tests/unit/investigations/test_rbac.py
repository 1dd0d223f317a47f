"""RBAC reading: refusals in logs, and the verbs a Role grants (YAML and describe), as kubectl prints them."""

from __future__ import annotations

from shared.investigations.rules.rbac import denials, granted_verbs

LOG = (
    "I0102 10:00:00 starting\n"
    "E0102 10:00:01 reflector.go:138] Failed to watch *v1.Pod: failed to list *v1.Pod: pods is forbidden: User "
    '"system:serviceaccount:shop:reader" cannot list resource "pods" in API group "" in the namespace "shop"\n'
    'E0102 10:00:02 forbidden: User "system:serviceaccount:shop:reader" cannot list resource "pods" again\n'
)
ROLE_YAML = """apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
rules:
- apiGroups:
  - ""
  resources:
  - pods
  verbs:
  - get
  - watch
- apiGroups: ["apps"]
  resources: ["deployments"]
  verbs: ["get", "list"]
"""
ROLE_DESCRIBE = """Name:         reader
Labels:       <none>
Annotations:  <none>
PolicyRule:
  Resources         Non-Resource URLs  Resource Names  Verbs
  ---------         -----------------  --------------  -----
  pods              []                 []              [get watch]
  deployments.apps  []                 []              [get list]
"""


def test_a_refusal_is_read_once_with_its_line() -> None:
    (d,) = denials(LOG)
    assert (d.namespace, d.account, d.verb, d.resource) == ("shop", "reader", "list", "pods")
    assert d.line.startswith("E0102 10:00:01")


def test_verbs_from_yaml_block_and_flow_lists() -> None:
    assert granted_verbs(ROLE_YAML, "pods")[0] == {"get", "watch"}
    assert granted_verbs(ROLE_YAML, "deployments")[0] == {"get", "list"}
    assert granted_verbs(ROLE_YAML, "secrets") == (set(), "")


def test_verbs_from_the_describe_table() -> None:
    verbs, quote = granted_verbs(ROLE_DESCRIBE, "pods")
    assert verbs == {"get", "watch"}
    assert quote.startswith("pods")
    assert granted_verbs(ROLE_DESCRIBE, "deployments")[0] == {"get", "list"}


def test_hostile_sizes_stay_bounded() -> None:
    huge = ("- " * 200_000) + "\n" + ("PolicyRule:\n" + "x " * 100_000)
    assert granted_verbs(huge, "pods")[0] == set()
    assert denials('system:serviceaccount:a:b" cannot ' * 50_000) == []

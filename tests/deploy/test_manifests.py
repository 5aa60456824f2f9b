"""The Kubernetes manifests: valid for the three latest Kubernetes minors (kubernetes-validate
--strict, offline), admitted where the "restricted" Pod Security Standard is enforced (one test per
rule of the standard), and complete: a Service, a PDB that allows evictions, a preStop pause,
spread across nodes and zones, a pinned image."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from chatgate import __version__
from chatgate.config.models import GatewaySection

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
MANIFESTS = sorted(K8S.glob("*.yaml"))
WORKLOADS = [K8S / "chatgate.yaml", K8S / "chatgate-replicas.yaml"]
Doc = dict[str, Any]


def docs(path: Path) -> list[Doc]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def kind(path: Path, name: str) -> Doc:
    [found] = [d for d in docs(path) if d["kind"] == name]
    return found


def pod(path: Path) -> Doc:
    spec: Doc = kind(path, "Deployment")["spec"]["template"]["spec"]
    return spec


def containers(spec: Doc) -> Iterator[Doc]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(key, [])


def latest_minors(count: int = 3) -> list[str]:
    from kubernetes_validate.utils import all_versions

    minors = sorted({tuple(int(p) for p in v.split(".")[:2]) for v in all_versions()})
    return [f"{major}.{minor}.0" for major, minor in minors[-count:]]


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_kubernetes_validate_strict_for_the_three_latest_minors(path: Path) -> None:
    utils = pytest.importorskip("kubernetes_validate.utils")
    versions = latest_minors()
    assert len(versions) == 3
    for version in versions:
        for doc in docs(path):
            utils.validate(doc, version, strict=True)  # raises on any unknown or wrong field


# The "restricted" Pod Security Standard (kubernetes.io/docs/concepts/security/pod-security-standards),
# one rule per row, each a check over the pod spec that returns what violates it.
def _host_namespaces(spec: Doc) -> list[str]:
    return [k for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k)]


def _privileged(spec: Doc) -> list[str]:
    return [c["name"] for c in containers(spec) if c.get("securityContext", {}).get("privileged")]


def _host_paths(spec: Doc) -> list[str]:
    return [v["name"] for v in spec.get("volumes", []) if "hostPath" in v]


def _host_ports(spec: Doc) -> list[str]:
    return [c["name"] for c in containers(spec) for p in c.get("ports", []) if p.get("hostPort")]


def _proc_mount(spec: Doc) -> list[str]:
    return [
        c["name"]
        for c in containers(spec)
        if c.get("securityContext", {}).get("procMount", "Default") != "Default"
    ]


ALLOWED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                   "persistentVolumeClaim", "projected", "secret"}  # fmt: skip


def _volume_types(spec: Doc) -> list[str]:
    return [v["name"] for v in spec.get("volumes", []) if not set(v) - {"name"} <= ALLOWED_VOLUMES]


def _escalation(spec: Doc) -> list[str]:
    return [
        c["name"]
        for c in containers(spec)
        if c.get("securityContext", {}).get("allowPrivilegeEscalation") is not False
    ]


def _non_root(spec: Doc) -> list[str]:
    pod_level = spec.get("securityContext", {}).get("runAsNonRoot")
    return [
        c["name"]
        for c in containers(spec)
        if c.get("securityContext", {}).get("runAsNonRoot", pod_level) is not True
    ]


def _root_uid(spec: Doc) -> list[str]:
    pod_uid = spec.get("securityContext", {}).get("runAsUser")
    bad = [] if pod_uid != 0 else ["pod"]
    return bad + [
        c["name"] for c in containers(spec) if c.get("securityContext", {}).get("runAsUser") == 0
    ]


def _seccomp(spec: Doc) -> list[str]:
    pod_type = spec.get("securityContext", {}).get("seccompProfile", {}).get("type")
    return [
        c["name"]
        for c in containers(spec)
        if c.get("securityContext", {}).get("seccompProfile", {}).get("type", pod_type)
        not in ("RuntimeDefault", "Localhost")
    ]


def _capabilities(spec: Doc) -> list[str]:
    bad = []
    for c in containers(spec):
        caps = c.get("securityContext", {}).get("capabilities", {})
        if "ALL" not in caps.get("drop", []) or set(caps.get("add", [])) - {"NET_BIND_SERVICE"}:
            bad.append(c["name"])
    return bad


PSS_RESTRICTED: dict[str, Callable[[Doc], list[str]]] = {
    "host namespaces": _host_namespaces,
    "privileged containers": _privileged,
    "hostPath volumes": _host_paths,
    "host ports": _host_ports,
    "/proc mount type": _proc_mount,
    "volume types": _volume_types,
    "privilege escalation": _escalation,
    "running as non-root": _non_root,
    "running as non-root user": _root_uid,
    "seccomp": _seccomp,
    "capabilities": _capabilities,
}


@pytest.mark.parametrize("rule", sorted(PSS_RESTRICTED))
@pytest.mark.parametrize("path", WORKLOADS, ids=lambda p: p.name)
def test_pod_passes_the_restricted_pod_security_standard(path: Path, rule: str) -> None:
    assert PSS_RESTRICTED[rule](pod(path)) == []


@pytest.mark.parametrize("rule", sorted(PSS_RESTRICTED))
def test_each_restricted_rule_catches_what_it_forbids(rule: str) -> None:
    """The table is not vacuous: a pod with nothing set (the old manifests) or one that asks for
    the forbidden thing is caught by each rule."""
    bare: Doc = {
        "hostNetwork": True,
        "securityContext": {"runAsUser": 0},
        "volumes": [{"name": "host", "hostPath": {"path": "/"}}],
        "containers": [
            {"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}],
             "securityContext": {"privileged": True, "procMount": "Unmasked",
                                 "capabilities": {"add": ["SYS_ADMIN"]}}},
        ],
    }  # fmt: skip
    assert PSS_RESTRICTED[rule](bare) != []


@pytest.mark.parametrize("path", WORKLOADS, ids=lambda p: p.name)
def test_hardening_beyond_the_standard(path: Path) -> None:
    spec = pod(path)
    assert spec["automountServiceAccountToken"] is False
    [container] = spec["containers"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert {"/tmp", "/var/lib/chatgate", "/etc/chatgate"} <= mounts  # the writable places


@pytest.mark.parametrize("path", WORKLOADS, ids=lambda p: p.name)
def test_service_prestop_pinned_image_and_memory(path: Path) -> None:
    service = kind(path, "Service")
    spec = pod(path)
    [container] = spec["containers"]
    assert (
        service["spec"]["selector"] == kind(path, "Deployment")["spec"]["selector"]["matchLabels"]
    )
    assert service["spec"]["ports"][0]["targetPort"] == container["ports"][0]["name"]
    pause = int(container["lifecycle"]["preStop"]["exec"]["command"][1])
    drain = GatewaySection().drain_timeout_s
    assert pause > 0 and pause + drain < spec["terminationGracePeriodSeconds"]
    image = container["image"]
    assert image == f"chatgate:{__version__}" and container["imagePullPolicy"] == "IfNotPresent"
    request = container["resources"]["requests"]["memory"]
    assert int(request.removesuffix("Mi")) > 224  # above the idle footprint


def test_replicas_spread_over_nodes_and_zones_and_can_be_evicted() -> None:
    path = K8S / "chatgate-replicas.yaml"
    keys = {
        c["topologyKey"]: c["whenUnsatisfiable"] for c in pod(path)["topologySpreadConstraints"]
    }
    assert keys["kubernetes.io/hostname"] == "DoNotSchedule"
    assert "topology.kubernetes.io/zone" in keys
    pdb = kind(path, "PodDisruptionBudget")["spec"]
    assert pdb == {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "chatgate"}}}


def test_the_redis_password_is_not_in_the_deployment_file() -> None:
    assert all(d["kind"] != "Secret" for d in docs(K8S / "chatgate-replicas.yaml"))
    secret = kind(K8S / "chatgate-redis-secret.example.yaml", "Secret")
    assert secret["metadata"]["name"] == "chatgate-redis"
    assert "CHANGE-ME" in secret["stringData"]["url"]


@pytest.mark.parametrize("path", WORKLOADS, ids=lambda p: p.name)
def test_everything_the_pod_reads_is_created_by_the_file_or_the_readme(path: Path) -> None:
    """Applying the file after the manual's commands gives a pod that can start."""
    readme = (ROOT / "docs" / "deployment.md").read_text()
    created = {(d["kind"], d["metadata"]["name"]) for p in MANIFESTS for d in docs(p)}
    created |= {("ConfigMap", n) for n in re.findall(r"create configmap ([\w-]+)", readme)}
    created |= {("Secret", n) for n in re.findall(r"create secret generic ([\w-]+)", readme)}
    spec = pod(path)
    needed = {("ConfigMap", v["configMap"]["name"]) for v in spec["volumes"] if "configMap" in v}
    needed |= {("Secret", v["secret"]["secretName"]) for v in spec["volumes"] if "secret" in v}
    needed |= {("PersistentVolumeClaim", v["persistentVolumeClaim"]["claimName"])
               for v in spec["volumes"] if "persistentVolumeClaim" in v}  # fmt: skip
    for container in spec["containers"]:
        needed |= {("Secret", e["secretRef"]["name"]) for e in container.get("envFrom", [])}
    assert needed - created == set()
    assert f"apply -f deploy/k8s/{path.name}" in readme


def test_the_replicas_network_policy_allows_http_in_and_dns_redis_https_out() -> None:
    path = K8S / "chatgate-replicas.yaml"
    policy = kind(path, "NetworkPolicy")["spec"]
    labels = kind(path, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert policy["podSelector"] == {"matchLabels": labels}
    assert policy["policyTypes"] == ["Ingress", "Egress"]
    [container] = pod(path)["containers"]
    http = {p["containerPort"] for p in container["ports"]}
    assert [p["port"] for rule in policy["ingress"] for p in rule["ports"]] == sorted(http)
    out = {(p["protocol"], p["port"]) for rule in policy["egress"] for p in rule["ports"]}
    assert out == {("UDP", 53), ("TCP", 53), ("TCP", 6379), ("TCP", 443)}
    assert all(rule.get("ports") for rule in policy["egress"] + policy["ingress"])  # no allow-all

#!/usr/bin/env python3
"""Checks deploy/ without a container engine or a cluster (none exist in CI).

- every YAML file parses; the Kubernetes manifests have the fields the
  design needs (GPU requests, gRPC probes, a database volume, Prometheus
  annotations) and their ports agree with the daemon's config;
- the ConfigMap holds deploy/tiletuned.yaml verbatim, and tiletuned accepts
  that config (`tiletuned --config ... --print-config`, with the binary given
  as the first argument);
- every stop budget (Kubernetes terminationGracePeriodSeconds, compose
  stop_grace_period, systemd TimeoutStopSec) exceeds drain_timeout_seconds +
  shutdown_grace_seconds;
- the Dockerfiles run nothing CI does not run: their RUN steps call only
  deploy/install-deps.sh, the CMake presets of CMakePresets.json and user and
  file housekeeping; tini is PID 1; the health check is `tiletune health`;
- the systemd unit is Type=notify.
Usage: .ci/lint-deploy.py [PATH/TO/tiletuned]
"""
import configparser
import json
import pathlib
import re
import shlex
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
errors = []


def fail(where, message):
    errors.append(f"{where}: {message}")


def load_all(path):
    try:
        return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except yaml.YAMLError as e:
        fail(path.relative_to(ROOT), f"does not parse: {e}")
        return []


def port_of(address):
    return int(address.rsplit(":", 1)[1])


def seconds(text):
    match = re.fullmatch(r"(\d+)(s|min)?", str(text).strip())
    if not match:
        return None
    return int(match.group(1)) * (60 if match.group(2) == "min" else 1)


for path in sorted(DEPLOY.rglob("*.yaml")):
    load_all(path)

config_path = DEPLOY / "tiletuned.yaml"
config = yaml.safe_load(config_path.read_text())
stop_needs = float(config["drain_timeout_seconds"]) + float(config["shutdown_grace_seconds"])
grpc_port = port_of(config["listen"])
metrics_port = port_of(config["metrics_listen"])

if len(sys.argv) > 1:
    run = subprocess.run([sys.argv[1], "--config", str(config_path), "--print-config"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        fail("deploy/tiletuned.yaml", f"tiletuned refuses it: {run.stderr.strip()}")

# Kubernetes.
k8s = DEPLOY / "k8s"
kustomization = yaml.safe_load((k8s / "kustomization.yaml").read_text())
for resource in kustomization["resources"]:
    if not (k8s / resource).exists():
        fail("deploy/k8s/kustomization.yaml", f"lists missing {resource}")
gpu_resources = set()
for path in sorted(k8s.glob("*.yaml")):
    where = path.relative_to(ROOT)
    for doc in load_all(path):
        kind = doc.get("kind")
        if kind == "ConfigMap":
            if doc["data"].get("tiletuned.yaml") != config_path.read_text():
                fail(where, "data.tiletuned.yaml differs from deploy/tiletuned.yaml")
        if kind == "Service":
            annotations = doc["metadata"].get("annotations", {})
            if annotations.get("prometheus.io/port") != str(metrics_port):
                fail(where, "prometheus.io/port is not the metrics_listen port")
            ports = {p["name"]: p["port"] for p in doc["spec"]["ports"]}
            if ports.get("grpc") != grpc_port or ports.get("metrics") != metrics_port:
                fail(where, "service ports differ from listen/metrics_listen")
        if kind != "DaemonSet":
            continue
        pod = doc["spec"]["template"]
        spec = pod["spec"]
        if pod["metadata"].get("annotations", {}).get("prometheus.io/scrape") != "true":
            fail(where, "pod template lacks prometheus.io/scrape")
        grace = spec.get("terminationGracePeriodSeconds", 30)
        if grace <= stop_needs:
            fail(where, f"terminationGracePeriodSeconds {grace} <= drain + grace {stop_needs}")
        if spec.get("securityContext", {}).get("runAsNonRoot") is not True:
            fail(where, "pod does not run as non-root")
        volumes = {v["name"]: v for v in spec["volumes"]}
        for container in spec["containers"]:
            gpu_resources.update(k for k in container["resources"]["limits"] if k.endswith("/gpu"))
            ports = {p["name"]: p["containerPort"] for p in container["ports"]}
            if ports.get("grpc") != grpc_port or ports.get("metrics") != metrics_port:
                fail(where, "container ports differ from listen/metrics_listen")
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                grpc = container.get(probe, {}).get("grpc")
                if not grpc or grpc.get("port") != grpc_port:
                    fail(where, f"{probe} is not a gRPC probe on port {grpc_port}")
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            data = mounts.get(config["data_dir"])
            if not data or not ({"hostPath", "persistentVolumeClaim"} & volumes[data].keys()):
                fail(where, "data_dir is not on a hostPath or PVC volume")
for wanted in ("nvidia.com/gpu", "amd.com/gpu"):
    if wanted not in gpu_resources:
        fail("deploy/k8s", f"no DaemonSet requests {wanted}")

# Compose.
compose = yaml.safe_load((DEPLOY / "docker-compose.yaml").read_text())
for name, service in compose["services"].items():
    budget = seconds(service.get("stop_grace_period", "10s"))
    if budget is None or budget <= stop_needs:
        fail("deploy/docker-compose.yaml", f"{name}: stop_grace_period <= drain + grace")
    dockerfile = ROOT / service["build"]["dockerfile"]
    if not dockerfile.exists():
        fail("deploy/docker-compose.yaml", f"{name}: no {dockerfile.relative_to(ROOT)}")

# systemd.
unit = configparser.ConfigParser(strict=False, interpolation=None)
unit.optionxform = str
unit.read(DEPLOY / "systemd" / "tiletuned.service")
service = unit["Service"]
if service.get("Type") != "notify":
    fail("deploy/systemd/tiletuned.service", "Type is not notify")
if seconds(service.get("TimeoutStopSec", "90")) <= stop_needs:
    fail("deploy/systemd/tiletuned.service", "TimeoutStopSec <= drain + grace")

# Dockerfiles.
presets = {p["name"] for p in json.loads((ROOT / "CMakePresets.json").read_text())["configurePresets"]}
runtime_packages = (DEPLOY / "install-deps.sh").read_text().split("build_packages=")[0]
allowed = {"bash", "cmake", "rm", "useradd", "groupadd", "getent"}
for dockerfile in sorted(DEPLOY.glob("Dockerfile.*")):
    where = dockerfile.relative_to(ROOT)
    text = re.sub(r"\\\n", " ", dockerfile.read_text())
    for line in text.splitlines():
        instruction, _, rest = line.strip().partition(" ")
        if instruction != "RUN":
            continue
        for command in re.split(r"&&|\|\||;", rest):
            words = shlex.split(command.replace("(", " ").replace(")", " "))
            if not words:
                continue
            if words[0] not in allowed:
                fail(where, f"RUN calls {words[0]}, which CI does not run")
            if words[0] == "bash" and not words[1].endswith("install-deps.sh"):
                fail(where, f"RUN runs {words[1]}; only deploy/install-deps.sh is allowed")
            if words[0] == "cmake" and "--preset" in words:
                preset = words[words.index("--preset") + 1]
                if preset not in presets:
                    fail(where, f"cmake preset {preset} is not in CMakePresets.json")
    if not re.search(r'^ENTRYPOINT \["/usr/bin/tini", "--", "tiletuned"\]', text, re.M):
        fail(where, "tini is not PID 1 in front of tiletuned")
    if "tini" not in runtime_packages:
        fail(where, "tini is not among install-deps.sh's runtime packages")
    if not re.search(r"^HEALTHCHECK .*\"tiletune\".*\"health\"", text, re.M):
        fail(where, "HEALTHCHECK does not use `tiletune health`")
    if not re.search(r"^USER tiletune$", text, re.M):
        fail(where, "the image does not run as the tiletune user")

for e in errors:
    print(f"lint-deploy: {e}", file=sys.stderr)
if errors:
    sys.exit(1)
print("lint-deploy: deploy/ is consistent")

#!/usr/bin/env python3
"""Checks deploy/ without a container engine or a cluster (none exist in CI).

- every YAML file parses; each Kubernetes deployment (deploy/k8s and the
  fleet overlays deploy/k8s/fleet/*, rendered with `kubectl kustomize`) has
  the fields the design needs (GPU requests, gRPC probes, a database volume,
  Prometheus annotations) and its ports agree with the daemon's config;
- the ConfigMap holds deploy/tiletuned.yaml verbatim, and tiletuned accepts
  that config (`tiletuned --config ... --print-config`, with the binary given
  as the first argument) and the command line of every manifest: each flag
  is a setting of --print-config;
- fleet mode (the overlays, docker-compose.fleet.yaml): db is a postgresql://
  URL from a Secret, daemon_id is set (in Kubernetes: the node's name), the
  password comes from a libpq password file that is not a mounted Secret
  (libpq ignores group-readable ones), daemons wait for the database, the
  trial PostgreSQL has probes, a volume claim and a fast shutdown; the
  password file script escapes and writes mode 0600 (run on a sample); no file
  under deploy/ holds a database URL with a password;
- every stop budget (Kubernetes terminationGracePeriodSeconds, compose
  stop_grace_period, systemd TimeoutStopSec) exceeds drain_timeout_seconds +
  shutdown_grace_seconds;
- the Dockerfiles run nothing CI does not run: their RUN steps call only
  deploy/install-deps.sh, the CMake presets of CMakePresets.json and user and
  file housekeeping; tini is PID 1; the health check is `tiletune health`;
  they expose the config's ports and make data_dir the volume; they build
  the binaries deploy/container-smoke.sh puts in the CPU image, whose
  `prebuilt` stage that script builds and runs in CI (the CUDA and ROCm
  images are only linted: their vendor base images cannot be fetched here);
- the systemd unit is Type=notify;
- monitoring: the Grafana dashboard (deploy/grafana) parses and has a
  Prometheus data source variable, ids, grid positions and a query per
  target; the alert rules (deploy/prometheus) have expr, severity, summary
  and durations, and one watches up{job=...}; every tiletune_ series either
  queries is one tiletuned exposes (names and types read from
  server/metric_names.h, the C++ code's list), counters are read through
  rate/increase and histogram_quantile keeps le; the ServiceMonitor
  (deploy/k8s/monitoring) selects the tiletuned Service on its metrics port
  and scrapes it as the job the alerts watch.
The kustomizations are rendered with `kubectl kustomize` when kubectl is on
PATH, else by a renderer here for the features they use (resources, a
configMapGenerator, strategic merge patches by target kind).
Usage: .ci/lint-deploy.py [PATH/TO/tiletuned]
"""
import configparser
import json
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

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

daemon = sys.argv[1] if len(sys.argv) > 1 else None
# The settings tiletuned has (every flag is one of them), from its own
# --print-config; empty without the binary.
daemon_keys = set()
if daemon:
    run = subprocess.run([daemon, "--config", str(config_path), "--print-config"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        fail("deploy/tiletuned.yaml", f"tiletuned refuses it: {run.stderr.strip()}")
    else:
        daemon_keys = set(yaml.safe_load(run.stdout))

# Where the manifests and compose mount deploy/tiletuned.yaml.
MOUNTED_CONFIG = "/etc/tiletune/tiletuned.yaml"
# A database URL that carries a password (libpq's password file supplies it).
URL_WITH_PASSWORD = re.compile(r"postgres(?:ql)?://[^\s/@:]+:[^\s/@]*@")
VAR_REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def flag_values(args):
    """{setting: value} of a tiletuned command line (--name value or --name=value)."""
    values = {}
    i = 0
    while i < len(args):
        name, equals, value = args[i].partition("=")
        if not name.startswith("--"):
            return None
        if not equals:
            i += 1
            value = args[i] if i < len(args) else ""
        values[name[2:].replace("-", "_")] = value
        i += 1
    return values


def check_daemon_args(where, args, samples):
    """Checks a tiletuned command line of a manifest: every flag is a setting
    of --print-config, --config names the mounted deploy/tiletuned.yaml, and
    tiletuned accepts the whole line once each $(VAR) is replaced by
    samples[VAR]. Returns the effective settings ({} without the binary)."""
    values = flag_values(args)
    if values is None:
        fail(where, f"tiletuned args are not --flag value pairs: {args}")
        return {}
    if values.get("config") != MOUNTED_CONFIG:
        fail(where, f"tiletuned does not read --config {MOUNTED_CONFIG}")
    for key in values:
        if daemon_keys and key != "config" and key not in daemon_keys:
            fail(where, f"sets --{key.replace('_', '-')}, which tiletuned --print-config lacks")
    for name in {n for a in args for n in VAR_REFERENCE.findall(a)} - samples.keys():
        fail(where, f"$({name}) in the args is not defined in the container's env")
    if not daemon:
        return {}
    line = [VAR_REFERENCE.sub(lambda m: samples.get(m.group(1), ""), a) for a in args]
    line = [str(config_path) if a == MOUNTED_CONFIG else a for a in line]
    run = subprocess.run([daemon, *line, "--print-config"], capture_output=True, text=True)
    if run.returncode != 0:
        fail(where, f"tiletuned refuses its args: {run.stderr.strip()}")
        return {}
    return yaml.safe_load(run.stdout)


def check_fleet_settings(where, settings):
    """Fleet mode: a shared PostgreSQL database, a password-free URL, a daemon_id."""
    if not settings:
        return
    if not str(settings["db"]).startswith(("postgresql://", "postgres://")):
        fail(where, f"db is not a postgresql:// URL in fleet mode: {settings['db']}")
    if not settings["daemon_id"]:
        fail(where, "daemon_id is empty: pods would hold job items under a changing host name")


def strategic_merge(base, patch):
    """A strategic merge patch as kubectl applies it to the fields our
    overlays touch: maps merge key by key, lists of named maps (containers,
    env, volumes, volumeMounts) merge by name, other lists are replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        merged = dict(base)
        for key, value in patch.items():
            merged[key] = strategic_merge(base[key], value) if key in base else value
        return merged
    named = lambda items: isinstance(items, list) and all(
        isinstance(i, dict) and "name" in i for i in items)
    if named(base) and named(patch):
        merged = list(base)
        for item in patch:
            at = next((i for i, b in enumerate(merged) if b["name"] == item["name"]), None)
            if at is None:
                merged.append(item)
            else:
                merged[at] = strategic_merge(merged[at], item)
        return merged
    return patch


def render_kustomization(path):
    """The manifests of a kustomization, rendered here for what ours use:
    resources (files and folders), configMapGenerator with files, and
    strategic merge patches chosen by target kind. Names keep no hash
    suffix (kustomize adds one and rewrites the references to it); anything
    else in a kustomization.yaml is an error, so a new feature cannot pass
    unchecked."""
    spec = yaml.safe_load((path / "kustomization.yaml").read_text())
    unknown = set(spec) - {"apiVersion", "kind", "resources", "configMapGenerator", "patches"}
    if unknown:
        fail(str(path.relative_to(ROOT)), f"kustomization fields this lint cannot render: {unknown}")
        return []
    docs = []
    for resource in spec.get("resources", []):
        target = path / resource
        if target.is_dir():
            docs += render_kustomization(target)
        else:
            docs += [d for d in yaml.safe_load_all(target.read_text()) if d is not None]
    for generator in spec.get("configMapGenerator", []):
        data = {pathlib.Path(f).name: (path / f).read_text() for f in generator.get("files", [])}
        metadata = {"name": generator["name"]}
        if "namespace" in generator:
            metadata["namespace"] = generator["namespace"]
        docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data})
    for patch in spec.get("patches", []):
        body = yaml.safe_load((path / patch["path"]).read_text())
        kind = patch.get("target", {}).get("kind", body.get("kind"))
        hits = [i for i, d in enumerate(docs) if d["kind"] == kind]
        if not hits:
            fail(str(path.relative_to(ROOT)), f"patch {patch['path']} matches no {kind}")
        for i in hits:
            # The patch's own name is ignored when a target selects by kind.
            body["metadata"] = docs[i]["metadata"]
            docs[i] = strategic_merge(docs[i], body)
    return docs


def kustomize(path):
    """The manifests `kubectl apply -k path` would apply: rendered by
    `kubectl kustomize` when kubectl is on PATH, else by
    render_kustomization (Debian 12 packages no kubectl new enough for
    `patches:`)."""
    where = path.relative_to(ROOT)
    kubectl = shutil.which("kubectl")
    if not kubectl:
        return render_kustomization(path)
    run = subprocess.run([kubectl, "kustomize", str(path)], capture_output=True, text=True)
    if run.returncode != 0:
        fail(where, f"kubectl kustomize fails: {run.stderr.strip()}")
        return []
    return [d for d in yaml.safe_load_all(run.stdout) if d is not None]


def env_samples(container):
    """A value for each env var of a container: the literal one, a sample
    PostgreSQL URL for a Secret (the only secret the args read), the
    variable's name for the downward API."""
    samples = {}
    for var in container.get("env", []):
        source = var.get("valueFrom", {})
        if "value" in var:
            samples[var["name"]] = str(var["value"])
        elif "secretKeyRef" in source:
            samples[var["name"]] = "postgresql://tiletune@db.invalid:5432/tiletune"
        else:
            samples[var["name"]] = var["name"].lower()
    return samples


def check_volumes(where, spec, rendered_configmaps, claims=()):
    """Every mount names a volume (or a StatefulSet's claim), every
    configMap volume a ConfigMap of the rendered manifests."""
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    for container in spec.get("initContainers", []) + spec["containers"]:
        for mount in container.get("volumeMounts", []):
            if mount["name"] not in volumes and mount["name"] not in claims:
                fail(where, f"{container['name']} mounts undefined volume {mount['name']}")
    for volume in volumes.values():
        if "configMap" in volume and volume["configMap"]["name"] not in rendered_configmaps:
            fail(where, f"volume {volume['name']} names missing ConfigMap "
                        f"{volume['configMap']['name']}")
    return volumes


def tiletuned_container(spec):
    return next(c for c in spec["containers"] if c["name"] == "tiletuned")


def check_daemonset(where, doc, rendered_configmaps):
    pod = doc["spec"]["template"]
    spec = pod["spec"]
    if pod["metadata"].get("annotations", {}).get("prometheus.io/scrape") != "true":
        fail(where, "pod template lacks prometheus.io/scrape")
    grace = spec.get("terminationGracePeriodSeconds", 30)
    if grace <= stop_needs:
        fail(where, f"terminationGracePeriodSeconds {grace} <= drain + grace {stop_needs}")
    if spec.get("securityContext", {}).get("runAsNonRoot") is not True:
        fail(where, "pod does not run as non-root")
    volumes = check_volumes(where, spec, rendered_configmaps)
    gpus = set()
    for container in spec["containers"]:
        gpus.update(k for k in container["resources"]["limits"] if k.endswith("/gpu"))
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
    return gpus


def check_fleet_daemonset(where, doc, settings):
    """The fleet overlay's changes: URL from a Secret, daemon_id from the
    node, the password through a libpq password file written at start.
    `settings`: what tiletuned makes of the container's args."""
    spec = doc["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    container = tiletuned_container(spec)
    env = {v["name"]: v for v in container.get("env", [])}
    check_fleet_settings(where, settings)
    values = flag_values(container["args"]) or {}

    def sources(setting):
        names = VAR_REFERENCE.findall(values.get(setting, ""))
        return [env.get(n, {}).get("valueFrom", {}) for n in names]

    if not sources("db") or not all("secretKeyRef" in s for s in sources("db")):
        fail(where, "--db does not come from a Secret (secretKeyRef env var)")
    if {"fieldPath": "spec.nodeName"} not in [s.get("fieldRef") for s in sources("daemon_id")]:
        fail(where, "--daemon-id does not name the node (downward API spec.nodeName)")
    passfile = env.get("PGPASSFILE", {}).get("value")
    if not passfile:
        fail(where, "no PGPASSFILE: the daemon has no password for the database")
        return
    mounts = [m for m in container["volumeMounts"] if passfile.startswith(m["mountPath"] + "/")]
    if not mounts:
        fail(where, f"PGPASSFILE {passfile} is on no volume")
        return
    volume = volumes[mounts[0]["name"]]
    if {"secret", "projected"} & volume.keys():
        fail(where, "PGPASSFILE is on a Secret volume: group-readable under fsGroup, "
                    "which libpq ignores")
    writers = [c["name"] for c in spec.get("initContainers", [])
               for m in c.get("volumeMounts", [])
               if m["name"] == volume["name"] and not m.get("readOnly")]
    if not writers:
        fail(where, f"no init container writes PGPASSFILE's volume {volume['name']}")


def check_trial_postgres(where, doc, rendered_configmaps, daemon_secrets):
    """The in-cluster PostgreSQL: probes, data on a PVC, its password from
    the Secret the daemons' URL comes from, a fast shutdown."""
    spec = doc["spec"]["template"]["spec"]
    if spec.get("securityContext", {}).get("runAsNonRoot") is not True:
        fail(where, "pod does not run as non-root")
    claims = {c["metadata"]["name"] for c in doc["spec"].get("volumeClaimTemplates", [])}
    check_volumes(where, spec, rendered_configmaps, claims)
    container = spec["containers"][0]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        if probe not in container:
            fail(where, f"no {probe}")
    env = {v["name"]: v for v in container.get("env", [])}
    password = env.get("POSTGRES_PASSWORD", {})
    secret = password.get("valueFrom", {}).get("secretKeyRef", {}).get("name")
    if secret not in daemon_secrets:
        fail(where, f"POSTGRES_PASSWORD is not from a Secret the daemons read ({daemon_secrets})")
    pgdata = env.get("PGDATA", {}).get("value", "")
    if not any(pgdata.startswith(m["mountPath"] + "/") and m["name"] in claims
               for m in container.get("volumeMounts", [])):
        fail(where, "PGDATA is not on a volumeClaimTemplates volume")
    if "preStop" not in container.get("lifecycle", {}):
        fail(where, "no preStop fast shutdown: SIGTERM waits for the daemons to disconnect")


# Kubernetes: what `kubectl apply -k` applies for each deployment.
k8s = DEPLOY / "k8s"
for path in [k8s, *sorted(p.parent for p in (k8s / "fleet").glob("*/kustomization.yaml"))]:
    where = path.relative_to(ROOT)
    fleet = path != k8s
    docs = kustomize(path)
    configmaps = {d["metadata"]["name"] for d in docs if d["kind"] == "ConfigMap"}
    gpu_resources = set()
    daemon_secrets = set()
    for doc in docs:
        kind = doc["kind"]
        here = f"{where}: {kind} {doc['metadata']['name']}"
        if kind == "ConfigMap" and doc["metadata"]["name"] == "tiletuned-config":
            if doc["data"].get("tiletuned.yaml") != config_path.read_text():
                fail(here, "data.tiletuned.yaml differs from deploy/tiletuned.yaml")
        if kind == "Service" and doc["metadata"]["name"] == "tiletuned":
            annotations = doc["metadata"].get("annotations", {})
            if annotations.get("prometheus.io/port") != str(metrics_port):
                fail(here, "prometheus.io/port is not the metrics_listen port")
            ports = {p["name"]: p["port"] for p in doc["spec"]["ports"]}
            if ports.get("grpc") != grpc_port or ports.get("metrics") != metrics_port:
                fail(here, "service ports differ from listen/metrics_listen")
        if kind == "DaemonSet":
            gpu_resources |= check_daemonset(here, doc, configmaps)
            container = tiletuned_container(doc["spec"]["template"]["spec"])
            settings = check_daemon_args(here, container["args"], env_samples(container))
            if fleet:
                check_fleet_daemonset(here, doc, settings)
                daemon_secrets |= {v["valueFrom"]["secretKeyRef"]["name"]
                                   for v in container.get("env", [])
                                   if "secretKeyRef" in v.get("valueFrom", {})}
    for doc in docs:
        if doc["kind"] == "StatefulSet":
            here = f"{where}: StatefulSet {doc['metadata']['name']}"
            check_trial_postgres(here, doc, configmaps, daemon_secrets)
    for wanted in ("nvidia.com/gpu", "amd.com/gpu"):
        if docs and wanted not in gpu_resources:
            fail(where, f"no DaemonSet requests {wanted}")

# Monitoring: the Grafana dashboard, the alert rules and the ServiceMonitor.
# The metric families tiletuned exposes have one source, server/metric_names.h:
# the C++ registry takes them from there and a test checks /metrics against
# it, so the names and types are read here from that file.
names_path = ROOT / "server" / "metric_names.h"
names_text = names_path.read_text()
families = dict(re.findall(r'MetricFamily\s+k\w+\{\s*"(\w+)",\s*MetricType::k(\w+)', names_text))
declared = set(re.findall(r"MetricFamily\s+(k\w+)\{", names_text))
listed = re.search(r"kMetricFamilies\[\]\s*=\s*\{([^}]*)\}", names_text)
listed = set(re.findall(r"k\w+", listed.group(1))) if listed else set()
if not families:
    fail(names_path.relative_to(ROOT), "no MetricFamily declarations found")
if declared != listed:
    fail(names_path.relative_to(ROOT), f"kMetricFamilies differs from the families declared: "
                                       f"{sorted(declared ^ listed)}")
for name, kind in families.items():
    if (kind == "Counter") != name.endswith("_total"):
        fail(names_path.relative_to(ROOT), f"{name} ({kind}): counters, and only they, end in _total")
# The series a query may name: a histogram's are its _bucket, _sum and _count.
series = {}
for name, kind in families.items():
    for suffix in ("_bucket", "_sum", "_count") if kind == "Histogram" else ("",):
        series[name + suffix] = kind
QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
METRIC_REFERENCE = re.compile(r"\btiletune_\w+")
PAIRS = {")": "(", "]": "[", "}": "{"}


def check_promql(where, expr):
    """A query of the dashboard or the alerts: its brackets pair up, every
    tiletune_ series it names is one tiletuned exposes, counters and
    histogram series are read through rate, irate or increase, and a
    histogram_quantile keeps le."""
    bare = QUOTED.sub('""', expr)
    stack = []
    for c in bare:
        if c in "([{":
            stack.append(c)
        elif c in PAIRS and (not stack or stack.pop() != PAIRS[c]):
            stack.append("unpaired")
            break
    if stack:
        fail(where, f"brackets do not pair up in {expr!r}")
    for match in METRIC_REFERENCE.finditer(bare):
        name = match.group(0)
        if name not in series:
            fail(where, f"{name} is not a metric tiletuned exposes (server/metric_names.h)")
        elif series[name] != "Gauge" and not re.search(r"\b(rate|irate|increase)\(\s*$",
                                                         bare[:match.start()]):
            fail(where, f"{name} is a {series[name].lower()} series read without rate/increase")
    if "histogram_quantile" in bare and not re.search(r"\bby\s*\([^)]*\ble\b", bare):
        fail(where, f"histogram_quantile without `by (le)`: {expr!r}")


dashboard_path = DEPLOY / "grafana" / "tiletune-dashboard.json"
where = dashboard_path.relative_to(ROOT)
try:
    dashboard = json.loads(dashboard_path.read_text())
except json.JSONDecodeError as e:
    fail(where, f"does not parse: {e}")
    dashboard = {}
for key in ("uid", "title", "schemaVersion", "panels", "templating"):
    if key not in dashboard:
        fail(where, f"no {key}")
variables = {v.get("name"): v for v in dashboard.get("templating", {}).get("list", [])}
datasource = variables.get("datasource", {})
if datasource.get("type") != "datasource" or datasource.get("query") != "prometheus":
    fail(where, "no Prometheus data source variable `datasource`")
for name, variable in variables.items():
    if variable.get("type") == "query":
        query = variable.get("query")
        check_promql(f"{where}: variable {name}",
                     query.get("query", "") if isinstance(query, dict) else str(query))
panels = [p for top in dashboard.get("panels", []) for p in [top, *top.get("panels", [])]]
ids = [p.get("id") for p in panels]
if None in ids or len(set(ids)) != len(ids):
    fail(where, "panel ids are missing or repeat")
for panel in panels:
    here = f"{where}: panel {panel.get('title')!r}"
    grid = panel.get("gridPos", {})
    if not all(isinstance(grid.get(k), int) for k in "hwxy") or grid["x"] + grid["w"] > 24:
        fail(here, "gridPos is not h, w, x, y within 24 columns")
    if panel.get("type") == "row":
        continue
    targets = panel.get("targets", [])
    refs = [t.get("refId") for t in targets]
    if not targets or None in refs or len(set(refs)) != len(refs):
        fail(here, "no targets, or their refIds are missing or repeat")
    for target in targets:
        source = target.get("datasource") or panel.get("datasource") or {}
        if source.get("uid") != "${datasource}":
            fail(here, f"target {target.get('refId')} is not on the $datasource variable")
        if not target.get("expr"):
            fail(here, f"target {target.get('refId')} has no expr")
            continue
        check_promql(here, target["expr"])
        for name in re.findall(r"\$\{?(\w+)", target["expr"]):
            if not name.startswith("__") and name not in variables:
                fail(here, f"${name} is not a dashboard variable")

alerts_path = DEPLOY / "prometheus" / "tiletune-alerts.yaml"
where = alerts_path.relative_to(ROOT)
rules_doc = next(iter(load_all(alerts_path)), {})
DURATION = re.compile(r"(\d+(ms|s|m|h|d|w|y))+")
RULE_KEYS = {"alert", "record", "expr", "for", "keep_firing_for", "labels", "annotations"}
alert_names = []
up_jobs = set()  # the jobs of `up{job="…"}` in the rules
groups = rules_doc.get("groups") if isinstance(rules_doc, dict) else None
if not groups:
    fail(where, "no groups")
for group in groups or []:
    if not group.get("name") or not group.get("rules"):
        fail(where, "a group without a name or rules")
    for rule in group.get("rules") or []:
        name = rule.get("alert") or rule.get("record")
        here = f"{where}: {name}"
        if not name or ("alert" in rule) == ("record" in rule):
            fail(here, "a rule is either an alert or a record, and names it")
        if set(rule) - RULE_KEYS:
            fail(here, f"fields Prometheus does not know: {sorted(set(rule) - RULE_KEYS)}")
        expr = rule.get("expr")
        if not isinstance(expr, str) or not expr.strip():
            fail(here, "no expr")
            continue
        check_promql(here, expr)
        up_jobs |= set(re.findall(r'\bup\{[^}]*\bjob="([^"]+)"', expr))
        if "alert" not in rule:
            continue
        alert_names.append(name)
        if "for" in rule and not DURATION.fullmatch(str(rule["for"])):
            fail(here, f"for: {rule['for']} is not a duration")
        if rule.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
            fail(here, "labels.severity is not critical, warning or info")
        if not rule.get("annotations", {}).get("summary"):
            fail(here, "no annotations.summary")
if len(set(alert_names)) != len(alert_names):
    fail(where, f"alert names repeat: {alert_names}")
if not up_jobs:
    fail(where, "no rule on up{job=...}: a daemon that stops answering alerts nobody")
if shutil.which("promtool"):
    run = subprocess.run(["promtool", "check", "rules", str(alerts_path)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        fail(where, f"promtool check rules: {(run.stdout + run.stderr).strip()}")

# The ServiceMonitor (Prometheus Operator) scrapes the Service of deploy/k8s,
# as the job the alerts watch.
where = "deploy/k8s/monitoring"
service = next((d for d in kustomize(k8s)
                if d["kind"] == "Service" and d["metadata"]["name"] == "tiletuned"), None)
monitors = [d for d in kustomize(k8s / "monitoring") if d["kind"] == "ServiceMonitor"]
if not monitors or not service:
    fail(where, "no ServiceMonitor, or no tiletuned Service in deploy/k8s")
for monitor in monitors if service else []:
    here = f"{where}: ServiceMonitor {monitor['metadata']['name']}"
    spec = monitor["spec"]
    labels = service["metadata"].get("labels", {})
    if not spec.get("selector", {}).get("matchLabels", {}).items() <= labels.items():
        fail(here, "selector does not match the tiletuned Service's labels")
    if service["metadata"]["namespace"] not in spec.get("namespaceSelector", {}).get("matchNames", []):
        fail(here, f"namespaceSelector lacks the Service's namespace {service['metadata']['namespace']}")
    ports = {p["name"]: p["port"] for p in service["spec"]["ports"]}
    path = service["metadata"].get("annotations", {}).get("prometheus.io/path", "/metrics")
    if not spec.get("endpoints"):
        fail(here, "no endpoints")
    for endpoint in spec.get("endpoints", []):
        if ports.get(endpoint.get("port")) != metrics_port:
            fail(here, f"endpoint port {endpoint.get('port')} is not the Service's metrics port")
        if endpoint.get("path", "/metrics") != path:
            fail(here, f"endpoint path {endpoint.get('path')} is not {path}")
    # The operator's job label: the Service's label named by jobLabel, else its name.
    job = labels.get(spec.get("jobLabel"), service["metadata"]["name"])
    if up_jobs and job not in up_jobs:
        fail(here, f"scrapes as job {job}; the alerts watch up{{job=...}} of {sorted(up_jobs)}")

# Compose.
compose = yaml.safe_load((DEPLOY / "docker-compose.yaml").read_text())
for name, service in compose["services"].items():
    budget = seconds(service.get("stop_grace_period", "10s"))
    if budget is None or budget <= stop_needs:
        fail("deploy/docker-compose.yaml", f"{name}: stop_grace_period <= drain + grace")
    dockerfile = ROOT / service["build"]["dockerfile"]
    if not dockerfile.exists():
        fail("deploy/docker-compose.yaml", f"{name}: no {dockerfile.relative_to(ROOT)}")

# Compose, fleet mode: docker-compose.fleet.yaml layered over it.
where = "deploy/docker-compose.fleet.yaml"
fleet_compose = yaml.safe_load((DEPLOY / "docker-compose.fleet.yaml").read_text())
fleet_services = fleet_compose["services"]
daemon_ids = []
for name, service in fleet_services.items():
    environment = service.get("environment", {})
    if "POSTGRES_PASSWORD" in environment:
        fail(where, f"{name}: a literal POSTGRES_PASSWORD (use POSTGRES_PASSWORD_FILE)")
    for volume in service.get("volumes", []):
        source = volume.split(":")[0]
        if source.startswith(".") and not (DEPLOY / source).exists():
            fail(where, f"{name}: mounts missing {source}")
    if name not in compose["services"]:
        continue
    # A daemon of docker-compose.yaml, switched to the shared database.
    settings = check_daemon_args(f"{where}: {name}", service.get("command", []), environment)
    check_fleet_settings(f"{where}: {name}", settings)
    if settings:
        daemon_ids.append(settings["daemon_id"])
    if not environment.get("PGPASSFILE"):
        fail(where, f"{name}: no PGPASSFILE: the daemon has no password for the database")
    for dependency, condition in service.get("depends_on", {}).items():
        if dependency not in fleet_services:
            fail(where, f"{name}: depends on undefined service {dependency}")
        wanted = "service_healthy" if "healthcheck" in fleet_services.get(dependency, {}) \
            else "service_completed_successfully"
        if condition.get("condition") != wanted:
            fail(where, f"{name}: does not wait for {dependency} ({wanted})")
if len(set(daemon_ids)) != len(daemon_ids):
    fail(where, f"daemon_id repeats among the daemons: {daemon_ids}")

# No database password in any file here: libpq password files supply it.
for path in sorted(DEPLOY.rglob("*")):
    if path.is_file() and path.parent != DEPLOY / "secrets":
        if URL_WITH_PASSWORD.search(path.read_text(errors="replace")):
            fail(path.relative_to(ROOT), "a database URL with a password")

# The password file script, run on a password that needs escaping: libpq
# reads only a file of mode 0600 or less, with ':' and '\\' escaped.
script = DEPLOY / "k8s" / "fleet" / "external-postgres" / "pgpass-from-password.sh"
with tempfile.TemporaryDirectory() as tmp:
    password, pgpass = pathlib.Path(tmp, "password"), pathlib.Path(tmp, "pgpass")
    password.write_text("a:b\\c d$e\n")
    run = subprocess.run(["sh", str(script), str(password), str(pgpass)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        fail(script.relative_to(ROOT), f"fails: {run.stderr.strip()}")
    elif pgpass.read_text() != "*:*:*:*:a\\:b\\\\c d$e\n":
        fail(script.relative_to(ROOT), f"writes {pgpass.read_text()!r}")
    elif pgpass.stat().st_mode & 0o077:
        fail(script.relative_to(ROOT), f"writes mode {pgpass.stat().st_mode & 0o777:o}")

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
smoke = (DEPLOY / "container-smoke.sh").read_text()
smoke_binaries = re.search(r"^binaries=\((.*)\)$", smoke, re.M).group(1).split()
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
    exposed = {int(p) for line in re.findall(r"^EXPOSE (.*)$", text, re.M) for p in line.split()}
    if exposed != {grpc_port, metrics_port}:
        fail(where, f"EXPOSE {sorted(exposed)} differs from listen/metrics_listen")
    if re.findall(r"^VOLUME (.*)$", text, re.M) != [config["data_dir"]]:
        fail(where, f"VOLUME is not data_dir ({config['data_dir']})")
    for targets in re.findall(r"cmake --build --preset \S+ --target ([^&\n]*)", text):
        if targets.split() != smoke_binaries:
            fail(where, f"builds {targets.split()}, deploy/container-smoke.sh "
                        f"puts {smoke_binaries} in the prebuilt image")

# The CPU image: CI builds its prebuilt stage from the binaries CI built
# (deploy/container-smoke.sh); a plain build, its last stage, compiles them.
where = "deploy/Dockerfile.cpu"
stages = re.findall(r"^FROM (\S+)(?: AS (\S+))?$", (DEPLOY / "Dockerfile.cpu").read_text(), re.M)
if "--target prebuilt" not in smoke or "prebuilt" not in [name for _, name in stages]:
    fail(where, "deploy/container-smoke.sh does not build a stage named prebuilt")
last_stage = (DEPLOY / "Dockerfile.cpu").read_text().rsplit("\nFROM ", 1)[1]
if "COPY --from=build " not in last_stage:
    fail(where, "the last stage does not take the binaries of the build stage")

for e in errors:
    print(f"lint-deploy: {e}", file=sys.stderr)
if errors:
    sys.exit(1)
print("lint-deploy: deploy/ is consistent")

#!/usr/bin/env bash
# Builds the CPU image (deploy/Dockerfile.cpu, its `prebuilt` stage, from the
# binaries in build/release/bin: nothing is compiled again), runs it with
# podman, tunes examples/job.yaml through the port published on 127.0.0.1
# with the CLI of build/release/bin, checks the Lookup HIT, stops the
# container with SIGTERM and checks the daemon drained and exited 0.
#
# No registry is reachable in CI, so the base image is Debian 12 made here:
# `debootstrap --variant=minbase bookworm` from the mirror apt uses, slimmed
# and `podman import`ed, the tarball cached in $TILETUNE_CONTAINER_CACHE
# (default /var/cache/tiletune-container) and the image in podman's storage,
# so a second run reuses both and podman's layer cache.
# Podman reads only the containers.conf written here (CONTAINERS_CONF): the
# runc runtime (crun fails where cgroups are in hybrid mode) and ulimits
# that runc can set (below); podman finds by itself that there is no systemd
# (cgroupfs, events to a file).
#
# Needs root (debootstrap; run as another user, it runs itself under sudo),
# podman, runc and debootstrap (deploy/install-deps.sh). It leaves nothing in
# the work tree: build/container-smoke and build/image go when it ends.
# Exits 0 printing "SKIP: ..." only where the kernel lets no container run;
# any other problem fails.
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."

bin=build/release/bin
binaries=(tiletuned tiletune tiletune-worker tiletune-rtc)
work=build/container-smoke
# The prebuilt stage's binaries (PREBUILT_BIN; .dockerignore lets it in).
prebuilt=build/image
cache=${TILETUNE_CONTAINER_CACHE:-/var/cache/tiletune-container}
suite=bookworm
base_image=localhost/tiletune-base:$suite
image=localhost/tiletune:cpu-smoke
container=tiletune-smoke-$$
# SIGKILL after this: more than drain_timeout_seconds + shutdown_grace_seconds
# of deploy/tiletuned.yaml, as compose's stop_grace_period.
stop_seconds=90
# Ceiling for the daemon to answer health after the container starts.
ready_seconds=120

started=$SECONDS
say() { echo "== container-smoke [$((SECONDS - started)) s]: $*"; }
fail() {
  echo "container-smoke: FAIL: $*" >&2
  exit 1
}
# Runs a podman command with its output in $work/podman.log (podman logs
# errors about the systemd it does not find here), shown if it fails.
quietly() {
  "$@" >"$work/podman.log" 2>&1 || {
    tail -n 60 "$work/podman.log" >&2
    fail "$* failed"
  }
}

if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || fail "needs root (debootstrap makes the base image) and there is no sudo"
  say "needs root (debootstrap makes the base image): running under sudo"
  exec sudo env TILETUNE_CONTAINER_CACHE="$cache" ${DEBIAN_MIRROR:+DEBIAN_MIRROR="$DEBIAN_MIRROR"} \
    bash "$PWD/deploy/container-smoke.sh"
fi
for tool in podman runc debootstrap; do
  command -v "$tool" >/dev/null || fail "no $tool on PATH: run deploy/install-deps.sh"
done
for b in "${binaries[@]}"; do
  [[ -x $bin/$b ]] || fail "no $bin/$b: build the release preset first"
done

# The one reason to skip: the namespaces runc puts a container in cannot be made.
if ! why=$(unshare --mount --uts --ipc --net --pid --fork true 2>&1); then
  echo "container-smoke: SKIP: this machine cannot run containers (unshare: $why)"
  exit 0
fi

rootfs="" # debootstrap's target while it is made
cleanup() {
  podman rm --force --volumes "$container" >/dev/null 2>&1 || true
  rm -rf "$work" "$prebuilt"
  if [[ -n $rootfs ]]; then
    umount "$rootfs/proc" "$rootfs/sys" 2>/dev/null || true
    rm -rf "$rootfs"
  fi
}
trap cleanup EXIT
cleanup
mkdir -p "$work/secrets" "$prebuilt" "$cache"
# Podman's defaults (nofile 1048576, nproc 4194304) are more than runc may
# set in a sandbox: at most this shell's hard limits, and nproc at most
# kernel.pid_max (more means nothing, and runc failed to set it above that).
limit() {
  local hard
  hard=$(ulimit -H "$1")
  [[ $hard == unlimited || $hard -gt $2 ]] && hard=$2
  echo "$hard"
}
nofile=$(limit -n 1048576)
nproc=$(limit -u "$(cat /proc/sys/kernel/pid_max)")
cat >"$work/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "runc"
EOF
export CONTAINERS_CONF=$PWD/$work/containers.conf

# The Debian mirror of apt's sources (one-line or deb822) that serves $suite.
debian_mirror() {
  local sources=()
  [[ -f /etc/apt/sources.list ]] && sources+=(/etc/apt/sources.list)
  sources+=(/etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
  awk -v suite="$suite" '
    FNR == 1 { uris = ""; has_suite = 0 }
    /^[[:space:]]*deb[[:space:]]/ {
      sub(/\[[^]]*\]/, "")
      if ($3 == suite) { print $2; exit }
    }
    /^URIs:/ { uris = $2 }
    /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) has_suite = 1 }
    uris != "" && has_suite { print uris; exit }
  ' "${sources[@]}"
}

tarball=$cache/debian-$suite-minbase.tar
if [[ ! -f $tarball ]]; then
  mirror=${DEBIAN_MIRROR:-$(debian_mirror)}
  mirror=${mirror:-http://deb.debian.org/debian}
  say "debootstrap --variant=minbase $suite from $mirror (cached in $tarball)"
  rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
  if ! debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1; then
    tail -n 30 "$cache/debootstrap.log" >&2
    fail "debootstrap failed (log: $cache/debootstrap.log)"
  fi
  # Slim as debian:12-slim is: no manuals, docs or translations, now or
  # from the packages the image installs later.
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
EOF
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  rm -rf "$rootfs"/usr/share/{man,info,locale,lintian}/* "$rootfs"/var/lib/apt/lists/* \
    "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb
  tar -C "$rootfs" --numeric-owner -cf "$tarball.part" .
  mv "$tarball.part" "$tarball"
  rm -rf "$rootfs"
  rootfs=""
fi
if ! podman image exists "$base_image"; then
  say "podman import $tarball as $base_image"
  quietly podman import --change 'CMD ["bash"]' "$tarball" "$base_image"
fi

say "building $image (deploy/Dockerfile.cpu, stage prebuilt)"
cp "${binaries[@]/#/$bin/}" "$prebuilt/"
previous=$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
quietly podman build --pull=never --format docker -f deploy/Dockerfile.cpu --target prebuilt \
  --build-arg RUNTIME_IMAGE="$base_image" --build-arg PREBUILT_BIN="$prebuilt" -t "$image" .
current=$(podman image inspect --format '{{.Id}}' "$image")
# The image this run replaced: its layers below the binaries stay cached.
if [[ -n $previous && $previous != "$current" ]]; then
  podman rmi "$previous" >/dev/null 2>&1 || true
fi

token=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
echo "smoke $token" >"$work/secrets/tokens"
echo "$token" >"$work/token"
chmod 0644 "$work/secrets/tokens" # the daemon runs as the image's tiletune user

say "starting $container"
# No systemd here to time the HEALTHCHECK: it runs once below instead.
quietly podman run --detach --name "$container" --publish 127.0.0.1::7733 \
  --health-interval disable --volume "$PWD/$work/secrets:/etc/tiletune/secrets:ro" "$image"
address=$(podman port "$container" 7733/tcp)
[[ $address == 127.0.0.1:* ]] || fail "port 7733 is published as '$address'"

deadline=$((SECONDS + ready_seconds))
until "$bin/tiletune" --server "$address" --timeout 3 health >/dev/null 2>&1; do
  if [[ $(podman inspect --format '{{.State.Running}}' "$container") != true ]]; then
    podman logs "$container" >&2
    fail "the container exited before it served"
  fi
  if ((SECONDS > deadline)); then
    podman logs "$container" >&2
    fail "tiletuned did not answer health on $address within $ready_seconds s"
  fi
  sleep 0.5
done
say "tiletuned serves on $address"
quietly podman healthcheck run "$container"

if ! TILETUNE_TOKEN_FILE=$PWD/$work/token bash examples/run-example.sh "$address"; then
  podman logs "$container" >&2
  fail "the example job failed against the container"
fi

say "podman stop (SIGTERM, SIGKILL after $stop_seconds s)"
stop_started=$SECONDS
quietly podman stop --time "$stop_seconds" "$container"
exit_code=$(podman inspect --format '{{.State.ExitCode}}' "$container")
if [[ $exit_code != 0 ]]; then
  podman logs "$container" >&2
  fail "tiletuned exited $exit_code on SIGTERM (137: killed after $stop_seconds s)"
fi
# Read whole, then searched: `podman logs | grep -q` fails under pipefail
# when grep stops reading before podman has written everything.
container_log=$(podman logs "$container" 2>&1)
grep -q "Terminated: draining" <<<"$container_log" ||
  fail "the container's log shows no drain on SIGTERM"
say "stopped in $((SECONDS - stop_started)) s, exit 0; all done in $((SECONDS - started)) s"

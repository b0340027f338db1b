# shellcheck shell=bash
# Provisioning for the test suite: installs what backend tests need when this machine allows it (root + apt).
# Sourced by scripts/test. Every function prints what it did or why it could not.

PROVISION_NOTES=()

note() {
  PROVISION_NOTES+=("$*")
  echo "provision: $*"
}

can_apt() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1
}

# with_progress WHAT COMMAND... : runs a quiet command, printing the elapsed time every 15 seconds until it ends.
with_progress() {
  local what=$1 start=$SECONDS pid rc=0
  shift
  "$@" >/dev/null 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if [ $(( (SECONDS - start) % 15 )) -eq 0 ] && kill -0 "$pid" 2>/dev/null; then
      echo "provision: ... $what: $((SECONDS - start)) s"
    fi
  done
  wait "$pid" || rc=$?
  return "$rc"
}

APT_UPDATED=0
apt_install() {
  # apt_install PACKAGE... : installs the packages that are missing.
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! can_apt; then
    note "missing packages ${missing[*]} (not root or no apt-get: install them to run every backend test)"
    return 1
  fi
  if [ "$APT_UPDATED" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || true
    APT_UPDATED=1
  fi
  echo "provision: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The local backend and code blocks: a system python3 and util-linux's unshare (PID namespaces for tree kill).
provision_local() {
  apt_install python3 util-linux procps || true
}

# The sandbox backend: bubblewrap.
provision_sandbox() {
  apt_install bubblewrap || true
  if command -v bwrap >/dev/null 2>&1 && ! bwrap --ro-bind / / --unshare-all --cap-drop ALL true 2>/dev/null; then
    note "bwrap is installed but cannot create namespaces here (user namespaces disabled?)"
  fi
}

# The Jupyter backend: Debian's ipykernel for the system python, matplotlib for the chart tests, jupyter_client for
# the benchmark's baseline (ipykernel depends on it already).
provision_jupyter() {
  apt_install python3-ipykernel python3-matplotlib python3-jupyter-client || true
  if [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c 'import ipykernel' 2>/dev/null; then
    note "/usr/bin/python3 cannot import ipykernel: Jupyter tests cannot run"
  fi
}

# The Debian archive apt uses here (debootstrap must use the same one: no other host may be reachable).
debian_mirror() {
  local m
  m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
    | grep -v '^#' | grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n 1 | tr -d ' ')
  echo "${m:-http://deb.debian.org/debian}"
}

# build_debian_image IMAGE PACKAGES : builds IMAGE from Debian bookworm (debootstrap minbase with the comma-separated
# PACKAGES, from the archive apt uses) unless Docker has it already.
build_debian_image() {
  local image=$1 packages=$2 mirror rootfs
  docker image inspect "$image" >/dev/null 2>&1 && return 0
  mirror=$(debian_mirror)
  rootfs=$(mktemp -d)
  echo "provision: building $image from Debian packages ($mirror); this takes a few minutes"
  if with_progress "building $image" \
      debootstrap --variant=minbase --include="$packages" bookworm "$rootfs" "$mirror"; then
    tar -C "$rootfs" -c . | docker import - "$image" >/dev/null
  else
    note "debootstrap of $image failed"
    tail -n 20 "$rootfs/debootstrap/debootstrap.log" 2>/dev/null | sed 's/^/provision:   /'
  fi
  rm -rf "$rootfs"
  docker image inspect "$image" >/dev/null 2>&1
}

# The container backend: a running Docker engine and locally built Python images (no registry is reachable): the test
# image (python3-minimal only) and the kernel image (python3-ipykernel too) that the container's Python kernel needs.
CODEEXEC_TEST_IMAGE=${CODEEXEC_TEST_IMAGE:-codeexec-python:bookworm}
CODEEXEC_KERNEL_IMAGE=${CODEEXEC_KERNEL_IMAGE:-codeexec-python-kernel:bookworm}
provision_docker() {
  apt_install docker.io debootstrap || true
  command -v dockerd >/dev/null 2>&1 || { note "no dockerd: container tests cannot run"; return 1; }
  if ! docker info >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
      note "dockerd is not running and this user cannot start it"
      return 1
    fi
    echo "provision: starting dockerd"
    mkdir -p /var/log
    (dockerd >/var/log/codeexec-dockerd.log 2>&1 &)
    for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    docker info >/dev/null 2>&1 || { note "dockerd did not start (see /var/log/codeexec-dockerd.log)"; return 1; }
  fi
  local status=0
  build_debian_image "$CODEEXEC_TEST_IMAGE" python3-minimal \
    || { note "no image $CODEEXEC_TEST_IMAGE: container tests cannot run"; status=1; }
  # The kernel image's absence only fails (in strict mode) the kernel tests, not the other container tests.
  # debootstrap does not resolve virtual packages: python3-zmq needs python3-cffi-backend's, gdb (through debugpy)
  # libboost-regex1.74.0's.
  build_debian_image "$CODEEXEC_KERNEL_IMAGE" \
    python3-minimal,python3-ipykernel,python3-cffi-backend,libboost-regex1.74.0 \
    || note "no image $CODEEXEC_KERNEL_IMAGE: the container's Python kernel tests cannot run"
  if docker image inspect "$CODEEXEC_KERNEL_IMAGE" >/dev/null 2>&1 \
      && ! docker run --rm --network none "$CODEEXEC_KERNEL_IMAGE" python3 -c 'import ipykernel' >/dev/null 2>&1; then
    note "$CODEEXEC_KERNEL_IMAGE cannot import ipykernel: the container's Python kernel tests cannot run"
  fi
  return "$status"
}

# Spec-level tests of the Kubernetes backend: `podman kube play` runs a generated pod spec for real, no cluster needed.
# Podman and catatonit (kube play's pause image needs it), the Docker test image copied into podman's store, and a
# containers.conf with lower default rlimits: podman asks runc for nofile/nproc up to the host's hard limits, which some
# hosts refuse to raise even for root ("error setting rlimit ... operation not permitted"). The file is not written to
# /etc; the tests pass it to podman through CONTAINERS_CONF (CODEEXEC_PODMAN_CONF names another one).
export CODEEXEC_PODMAN_CONF=${CODEEXEC_PODMAN_CONF:-${TMPDIR:-/tmp}/codeexec-podman-containers.conf}
provision_podman() {
  apt_install podman catatonit || true
  command -v podman >/dev/null 2>&1 || { note "no podman: the pod spec tests under podman kube play cannot run"; return 1; }
  if [ ! -f "$CODEEXEC_PODMAN_CONF" ]; then
    printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n' >"$CODEEXEC_PODMAN_CONF"
    echo "provision: wrote $CODEEXEC_PODMAN_CONF (lower default rlimits for podman's containers)"
  fi
  if ! podman image exists "localhost/$CODEEXEC_TEST_IMAGE" 2>/dev/null; then
    if docker image inspect "$CODEEXEC_TEST_IMAGE" >/dev/null 2>&1; then
      echo "provision: copying $CODEEXEC_TEST_IMAGE from Docker into podman"
      docker save "$CODEEXEC_TEST_IMAGE" | podman load -q >/dev/null \
        || { note "podman load of $CODEEXEC_TEST_IMAGE failed: the pod spec tests cannot run"; return 1; }
    else
      note "no Docker image $CODEEXEC_TEST_IMAGE to copy into podman: the pod spec tests cannot run"
      return 1
    fi
  fi
  podman image exists "localhost/$CODEEXEC_TEST_IMAGE"
}

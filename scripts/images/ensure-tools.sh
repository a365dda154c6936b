#!/usr/bin/env bash
# Installs the daemonless image tools when one is missing: mmdebstrap (base root filesystem
# from Debian packages), buildah (builds from the Dockerfiles), podman + runc (runs them).
# Debian/Ubuntu only, as root; `apt-get update` first. Prints nothing when all are present.
set -euo pipefail
missing=()
for t in mmdebstrap buildah podman runc; do command -v "$t" >/dev/null || missing+=("$t"); done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "[images] installing ${missing[*]} with apt-get" >&2
if [ "$(id -u)" != 0 ]; then
  echo "[images] need root to install ${missing[*]} (run: sudo apt-get install -y mmdebstrap buildah podman runc)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq mmdebstrap buildah podman runc >&2

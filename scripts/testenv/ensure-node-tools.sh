#!/usr/bin/env bash
# The real node's pieces that come from Debian's packages (root, Debian/Ubuntu):
# - installed when missing: runc, the CNI plugins (bridge, host-local, loopback), iproute2 (ip),
#   nftables (nft: kube-proxy's nftables mode calls it), util-linux (nsenter, unshare), openssl,
#   iptables and ipset (kube-router's NetworkPolicy controller calls iptables-save/-restore and ipset,
#   only inside the node's network namespace);
# - docker-registry (a loopback registry, so pods that pull with `Always` get ModelDock's images
#   without any outside registry) is NOT installed (its package starts a service): its .deb is
#   unpacked into the cache, keyed by version.
# Prints the directory holding the registry binary on the last line.
set -euo pipefail
cache="${MODELDOCK_CACHE:-$HOME/.cache/modeldock}"
log() { printf '[node-tools] %s\n' "$*" >&2; }
if [ "$(id -u)" != 0 ]; then log "the real node needs root"; exit 1; fi
export DEBIAN_FRONTEND=noninteractive
updated=
apt_update() { [ -n "$updated" ] || { apt-get update -qq >&2; updated=1; }; }
missing=()
have() { [ -e "$1" ] || command -v "$1" >/dev/null 2>&1; }
have runc || missing+=(runc)
have /usr/lib/cni/bridge || missing+=(containernetworking-plugins)
have ip || missing+=(iproute2)
have nft || missing+=(nftables)
have nsenter || missing+=(util-linux)
have openssl || missing+=(openssl)
have iptables-restore || missing+=(iptables)
have ipset || missing+=(ipset)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]} with apt-get"
  apt_update
  apt-get install -y -qq "${missing[@]}" >&2
fi
version=$(apt-cache policy docker-registry 2>/dev/null | awk '/Candidate:/{print $2}')
if [ -z "$version" ] || [ "$version" = "(none)" ]; then apt_update; version=$(apt-cache policy docker-registry | awk '/Candidate:/{print $2}'); fi
[ -n "$version" ] && [ "$version" != "(none)" ] || { log "no docker-registry package in the apt sources"; exit 1; }
out="$cache/bin/docker-registry-${version//[:+~]/_}"
if [ ! -f "$out/.built" ]; then
  log "docker-registry $version: unpacking into $out"
  rm -rf "$out"; mkdir -p "$out/deb"
  (cd "$out/deb" && apt-get download -qq "docker-registry=$version" >&2 && dpkg -x ./*.deb "$out/x")
  ln -sfn x/usr/bin/docker-registry "$out/docker-registry" # relative: the cache can be moved
  rm -rf "$out/deb"; touch "$out/.built"
fi
echo "$out"

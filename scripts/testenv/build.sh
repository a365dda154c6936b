#!/usr/bin/env bash
# Builds the local stack's Go binaries (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, etcd, kwok, kwokctl, ps-http-sim, vtcombo; for the real node kubelet,
# kube-proxy, containerd, its runc shim and ctr, the pause binary and kube-router) from their Go modules
# through the Go module proxy, into a cache OUTSIDE the repository keyed by version:
#   ${MODELDOCK_CACHE:-~/.cache/modeldock}/bin/<component>-<version>-<hash of wrapper go.sum>/
# A component whose stamp file exists is not rebuilt, so a second run takes seconds.
# Prints the directory holding all binaries (a per-key symlink farm) on the last line.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/versions.env"
cache="${MODELDOCK_CACHE:-$HOME/.cache/modeldock}"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly
gover=$(go env GOVERSION)
log() { printf '[build] %s\n' "$*" >&2; }
sum() { cat "$@" | sha256sum | cut -c1-12; }

# build_component NAME KEY COMMAND... : runs COMMAND with $out set, once per KEY.
build_component() {
  local name=$1 key=$2; shift 2
  out="$cache/bin/$name-$key"
  if [ -f "$out/.built" ]; then log "$name: cached ($out)"; return; fi
  log "$name: building into $out"
  rm -rf "$out"; mkdir -p "$out"
  local t0=$SECONDS
  "$@"
  touch "$out/.built"
  log "$name: built in $((SECONDS - t0))s"
}

kube_build() {
  log "a cold build of the Kubernetes binaries takes 10-25 min on 2 cores"
  local ldf="-s -w" minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ldf+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  (cd "$here/go/k8s" && go build -trimpath -pgo=off -ldflags "$ldf" -o "$out/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy)
  # The real node's sandbox ("pause") binary, from the same k8s.io/kubernetes module (C, static).
  local pause; pause="$(cd "$here/go/k8s" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c"
  gcc -Os -Wall -Werror -static -DVERSION="$K8S_VERSION-modeldock" -o "$out/pause" "$pause"
}
etcd_build() { (cd "$here/go/etcd" && go build -trimpath -o "$out/etcd" go.etcd.io/etcd/server/v3); }
# `go install mod@version` is refused here (the proxy hides the version list it checks for
# deprecations), so kwok and ps-http-sim are built from wrapper modules like etcd.
kwok_build() {
  (cd "$here/go/kwok" && go build -trimpath -o "$out/" sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl)
  # KWOK's default stages (Apache-2.0 YAML shipped in its module) are read from the module cache.
  local stages; stages="$(cd "$here/go/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage"
  mkdir -p "$out/stages" && cp -r "$stages/." "$out/stages/" && chmod -R u+w "$out/stages"
}
# The real node's container runtime (the supported one for Kubernetes 1.36: containerd 2.2+).
containerd_build() {
  local p=github.com/containerd/containerd/v2
  (cd "$here/go/containerd" && go build -trimpath -tags "no_btrfs no_devmapper no_zfs" \
    -ldflags "-s -w -X $p/version.Version=$CONTAINERD_VERSION -X $p/version.Package=$p" -o "$out/" \
    $p/cmd/containerd $p/cmd/containerd-shim-runc-v2 $p/cmd/ctr)
}
# The real node's NetworkPolicy enforcer: kube-router, run with its policy controller only
# (scripts/testenv/node.ts). A cold build takes ~8 min on 2 busy cores.
kube_router_build() {
  local p=github.com/cloudnativelabs/kube-router/v2
  (cd "$here/go/kube-router" && go build -trimpath \
    -ldflags "-s -w -X $p/pkg/version.Version=$KUBE_ROUTER_VERSION -X $p/pkg/version.BuildDate=1970-01-01T00:00:00Z" \
    -o "$out/kube-router" $p/cmd/kube-router)
}
sim_build() { (cd "$here/go/pssim" && go build -trimpath -o "$out/ps-http-sim" github.com/mattrobenolt/ps-http-sim); }
# vtcombo = vtgate + every tablet in one process (the sharded-ledger backend, scripts/testenv/vitess.ts).
vitess_build() {
  log "a cold build of vtcombo takes 4-10 min on 2 busy cores"
  (cd "$here/go/vitess" && go build -trimpath -ldflags "-s -w" -o "$out/vtcombo" vitess.io/vitess/go/cmd/vtcombo)
}

build_component kube "$K8S_VERSION-$(sum "$here/go/k8s/go.sum" <(echo "$gover"))" kube_build; kube_dir=$out
build_component etcd "$ETCD_VERSION-$(sum "$here/go/etcd/go.sum" <(echo "$gover"))" etcd_build; etcd_dir=$out
build_component kwok "$KWOK_VERSION-$(sum "$here/go/kwok/go.sum" <(echo "$gover"))" kwok_build; kwok_dir=$out
build_component ps-http-sim "$PS_HTTP_SIM_VERSION-$(sum "$here/go/pssim/go.sum" <(echo "$gover"))" sim_build; sim_dir=$out
build_component vitess "$VITESS_VERSION-$(sum "$here/go/vitess/go.sum" <(echo "$gover"))" vitess_build; vitess_dir=$out
build_component containerd "$CONTAINERD_VERSION-$(sum "$here/go/containerd/go.sum" <(echo "$gover"))" containerd_build; containerd_dir=$out
build_component kube-router "$KUBE_ROUTER_VERSION-$(sum "$here/go/kube-router/go.sum" <(echo "$gover"))" kube_router_build; kube_router_dir=$out

# One directory with every binary, named by the combined key, for PATH and the launcher.
farm="$cache/bin/stack-$(sum <(printf '%s\n' "$kube_dir" "$etcd_dir" "$kwok_dir" "$sim_dir" "$vitess_dir" "$containerd_dir" "$kube_router_dir"))"
mkdir -p "$farm"
for d in "$kube_dir" "$etcd_dir" "$kwok_dir" "$sim_dir" "$vitess_dir" "$containerd_dir" "$kube_router_dir"; do
  for f in "$d"/*; do ln -sfn "$f" "$farm/$(basename "$f")"; done
done
echo "$farm"

#!/usr/bin/env bash
# Builds the local stack's Go binaries (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, etcd, kwok, kwokctl, ps-http-sim) from their Go modules
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
  log "$name: building into $out (cold builds of Kubernetes take 10-25 min on 2 cores)"
  rm -rf "$out"; mkdir -p "$out"
  local t0=$SECONDS
  "$@"
  touch "$out/.built"
  log "$name: built in $((SECONDS - t0))s"
}

kube_build() {
  local ldf="-s -w" minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ldf+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  (cd "$here/go/k8s" && go build -trimpath -pgo=off -ldflags "$ldf" -o "$out/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
}
etcd_build() { (cd "$here/go/etcd" && go build -trimpath -o "$out/etcd" go.etcd.io/etcd/server/v3); }
# kwok and ps-http-sim have no replace directives: go install with their own go.sum.
kwok_build() { GOFLAGS= GOBIN="$out" go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" "sigs.k8s.io/kwok/cmd/kwokctl@$KWOK_VERSION"; }
sim_build() { GOFLAGS= GOBIN="$out" go install "github.com/mattrobenolt/ps-http-sim@$PS_HTTP_SIM_VERSION"; }

build_component kube "$K8S_VERSION-$(sum "$here/go/k8s/go.sum" <(echo "$gover"))" kube_build; kube_dir=$out
build_component etcd "$ETCD_VERSION-$(sum "$here/go/etcd/go.sum" <(echo "$gover"))" etcd_build; etcd_dir=$out
build_component kwok "$KWOK_VERSION-$(sum <(echo "$gover"))" kwok_build; kwok_dir=$out
build_component ps-http-sim "$PS_HTTP_SIM_VERSION-$(sum <(echo "$gover"))" sim_build; sim_dir=$out

# One directory with every binary, named by the combined key, for PATH and the launcher.
farm="$cache/bin/stack-$(sum <(printf '%s\n' "$kube_dir" "$etcd_dir" "$kwok_dir" "$sim_dir"))"
mkdir -p "$farm"
for d in "$kube_dir" "$etcd_dir" "$kwok_dir" "$sim_dir"; do
  for f in "$d"/*; do ln -sfn "$f" "$farm/$(basename "$f")"; done
done
echo "$farm"

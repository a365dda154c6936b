//go:build tools

// Package tools pins the container runtime of the local stack's real node: containerd, its runc
// shim, and ctr (to import ModelDock's images without a registry).
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)

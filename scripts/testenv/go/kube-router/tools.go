//go:build tools

// Package tools pins the real node's NetworkPolicy enforcer: kube-router, run with its network
// policy controller only (iptables + ipset in the node's network namespace).
package tools

import _ "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"

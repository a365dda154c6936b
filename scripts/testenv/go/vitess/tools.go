//go:build tools

// Package tools pins Vitess (vtcombo: vtgate and every tablet in one process).
package tools

import _ "vitess.io/vitess/go/cmd/vtcombo"

//go:build tools

// Package tools pins the PlanetScale HTTP API simulator.
package tools

import _ "github.com/mattrobenolt/ps-http-sim"

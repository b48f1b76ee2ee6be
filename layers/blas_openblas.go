//go:build openblas

package layers

/*
#cgo LDFLAGS: -lopenblas
*/
import "C"

import (
	G "gorgonia.org/gorgonia"
	"gonum.org/v1/netlib/blas/netlib"
)

// With -tags openblas, Gorgonia and the custom ops multiply matrices with
// OpenBLAS (Debian: apt-get install libopenblas-dev).
func init() { G.Use(netlib.Implementation{}) }

// BLASName names the matrix-multiply backend in use.
func BLASName() string { return "openblas" }

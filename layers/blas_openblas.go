//go:build openblas

package layers

/*
#cgo LDFLAGS: -lopenblas
*/
import "C"

import (
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// With -tags openblas, Gorgonia and the custom ops multiply matrices with
// OpenBLAS (Debian: apt-get install libopenblas-dev).
func init() { G.Use(netlib.Implementation{}) }

// BLASName names the matrix-multiply backend in use.
func BLASName() string { return "openblas" }

package model

import (
	"os"
	"testing"

	"github.com/alibi-go/alibi/layers"
)

// TestMain installs the fast BLAS before any test runs: the composed
// reference model in the tests multiplies with Gorgonia's own matrix ops,
// and its tolerances were set with it (see layers.UseFastBLAS).
func TestMain(m *testing.M) {
	layers.UseFastBLAS()
	os.Exit(m.Run())
}

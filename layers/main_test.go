package layers

import (
	"os"
	"testing"
)

// TestMain installs the fast BLAS before any test runs: the composed
// references in the tests multiply with Gorgonia's own matrix ops, and
// their tolerances were set with it (see UseFastBLAS).
func TestMain(m *testing.M) {
	UseFastBLAS()
	os.Exit(m.Run())
}

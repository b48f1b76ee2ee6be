// Package longtest splits the test suite in two: go test ./... runs the
// tests that finish in a few minutes, and go test -tags long ./... (what
// CI runs) adds the slow ones: long fuzzing, sweeps over many schemes or
// shapes, large problems and long kill-and-resume scenarios.
//
// A slow test calls Only at its start; a test whose cheap variant still
// covers the same code paths picks its sizes with Pick, running the full
// sweep under the tag. Nothing in it is specific to package layers: it
// lives here so that every package's tests can import it (it imports only
// testing).
package longtest

import "testing"

// Flag is the build tag that turns the long tests on.
const Flag = "long"

// Only skips t unless the test binary was built with the long tag, with a
// message that says how to run it.
func Only(t testing.TB) {
	t.Helper()
	if !Enabled {
		t.Skip("slow test: run it with go test -tags " + Flag + " ./...")
	}
}

// Pick returns long when the test binary was built with the long tag and
// short otherwise: the sizes, iteration counts or sweeps of a test whose
// short form still covers the same code paths.
func Pick[T any](short, long T) T {
	if Enabled {
		return long
	}
	return short
}

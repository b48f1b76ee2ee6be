//go:build long

package longtest

// Enabled reports whether the test binary was built with the long tag
// (go test -tags long), which runs the slow tests too.
const Enabled = true

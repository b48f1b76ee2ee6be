//go:build !faultinject

package train

// faultInjection is false in normal builds: the fault-injection hooks below
// do nothing and compile away. The tests of cmd/train build the command
// with -tags faultinject to use the real ones (faultinject.go).
const faultInjection = false

// crashInCheckpoint does nothing: see faultinject.go.
func crashInCheckpoint(int, string, []byte) {}

// faultNaNLoss is always false: see faultinject.go.
func faultNaNLoss(int) bool { return false }

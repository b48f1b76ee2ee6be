package longtest

import "testing"

// The tag decides both switches together: Pick takes the long value
// exactly when Only lets a test run.
func TestPickFollowsOnly(t *testing.T) {
	ran := false
	t.Run("only", func(t *testing.T) {
		Only(t)
		ran = true
	})
	if got := Pick("short", "long"); (got == "long") != ran {
		t.Errorf("Pick gave %q, but Only let the test run: %v", got, ran)
	}
	if ran != Enabled {
		t.Errorf("Only let the test run: %v; Enabled is %v", ran, Enabled)
	}
}

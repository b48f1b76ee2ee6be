package position_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/alibi-go/alibi/layers/position"
)

// The registry holds the built-in schemes in order, each under its
// own name, refuses a second scheme under a taken name and names the
// registered ones for an unknown name.
func TestSchemeRegistry(t *testing.T) {
	builtin := []string{"alibi", "sinusoidal", "none", "rope", "t5", "kerple", "fire", "fox"}
	if got := position.Names(); !slices.Equal(got[:len(builtin)], builtin) {
		t.Fatalf("Names() = %v, want %v first", got, builtin)
	}
	for _, name := range builtin {
		s, err := position.Lookup(name)
		if err != nil || s.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, s, err)
		}
	}
	if err := position.Register(position.AlibiPosition{}); err == nil {
		t.Error("a second alibi was registered")
	}
	_, err := position.Lookup("alibii")
	if !errors.Is(err, position.ErrUnknownScheme) {
		t.Errorf("Lookup(alibii): %v, want ErrUnknownScheme", err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				if _, err := position.Lookup("t5"); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

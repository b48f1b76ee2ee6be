package layers_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/alibi-go/alibi/layers"
)

// The registry holds the seven built-in schemes in order, each under its
// own name, refuses a second scheme under a taken name and names the
// registered ones for an unknown name.
func TestSchemeRegistry(t *testing.T) {
	builtin := []string{"alibi", "sinusoidal", "none", "rope", "t5", "kerple", "fire"}
	if got := layers.SchemeNames(); !slices.Equal(got[:len(builtin)], builtin) {
		t.Fatalf("SchemeNames() = %v, want %v first", got, builtin)
	}
	for _, name := range builtin {
		s, err := layers.LookupScheme(name)
		if err != nil || s.Name() != name {
			t.Errorf("LookupScheme(%q) = %v, %v", name, s, err)
		}
	}
	if err := layers.RegisterScheme(layers.AlibiPosition{}); err == nil {
		t.Error("a second alibi was registered")
	}
	_, err := layers.LookupScheme("alibii")
	if !errors.Is(err, layers.ErrUnknownScheme) {
		t.Errorf("LookupScheme(alibii): %v, want ErrUnknownScheme", err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				if _, err := layers.LookupScheme("t5"); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

package position

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ErrUnknownScheme is the error Lookup wraps for a name that no
// scheme is registered under.
var ErrUnknownScheme = errors.New("unknown position scheme")

// schemeRegistry is the set of position schemes by name, in registration
// order. It is safe for concurrent use.
type schemeRegistry struct {
	mu     sync.RWMutex
	byName map[string]Scheme
	names  []string
}

// schemes is the one registry: the built-in schemes, registered here, and
// those added with Register.
var schemes = newSchemeRegistry(
	AlibiPosition{},
	SinusoidalPosition{},
	NoPosition{},
	RopePosition{},
	T5Position{},
	KerplePosition{},
	FirePosition{},
	FoxPosition{},
	StickBreakingPosition{},
	PopePosition{},
)

// newSchemeRegistry returns a registry holding the schemes, in order; it
// panics on a duplicate name, a programming error.
func newSchemeRegistry(builtin ...Scheme) *schemeRegistry {
	r := &schemeRegistry{byName: map[string]Scheme{}}
	for _, s := range builtin {
		if err := r.register(s); err != nil {
			panic(err)
		}
	}
	return r
}

func (r *schemeRegistry) register(s Scheme) error {
	name := s.Name()
	if name == "" || strings.ContainsAny(name, " ,") {
		return fmt.Errorf("register position scheme: name %q must be a non-empty word", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byName[name]; ok {
		return fmt.Errorf("register position scheme: %q is already registered", name)
	}
	r.byName[name] = s
	r.names = append(r.names, name)
	return nil
}

// Register adds a position scheme under its Name, so that model
// configs and the commands can name it. It fails for a name already taken,
// and for an empty name or one with a space or a comma (cmd/experiment's
// --pos is a comma-separated list).
// Call it before building models that use the scheme, typically once at
// the start of main or of a test.
func Register(s Scheme) error { return schemes.register(s) }

// Lookup returns the position scheme registered under name. The
// error wraps ErrUnknownScheme and lists the registered names.
func Lookup(name string) (Scheme, error) {
	schemes.mu.RLock()
	defer schemes.mu.RUnlock()
	if s, ok := schemes.byName[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("%w %q; use one of %s", ErrUnknownScheme, name, strings.Join(schemes.names, ", "))
}

// Names returns the registered schemes' names, the built-in ones
// first (alibi, sinusoidal, none, rope, t5, kerple, fire, fox,
// stick-breaking, pope), then the others
// in the order of registration.
func Names() []string {
	schemes.mu.RLock()
	defer schemes.mu.RUnlock()
	return append([]string(nil), schemes.names...)
}

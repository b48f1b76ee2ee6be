package position

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
)

// Extension is an evaluation-time method that stretches a trained model's
// positions past its training length without retraining it: it changes how
// one scheme's positions enter attention, at a factor F >= 1 (typically the
// evaluation length divided by the training length). At F = 1 every
// extension is the plain scheme, bit for bit.
//
// The built-in extensions (see LookupExtension) are pi, ntk, dynamic-ntk
// and yarn for rope, and interp for alibi. An extension is a RotaryExtension or a
// SlopeExtension.
type Extension interface {
	// Name is the extension's registry name, the value of the commands'
	// --extend.
	Name() string
	// Scheme is the name of the position scheme it applies to.
	Scheme() string
}

// RotaryExtension is an extension of the rotary scheme: it replaces the
// rotation frequencies theta_k = base^(-2k/dHead) (see RopeTheta) and
// multiplies the rotated queries and keys by a scale.
type RotaryExtension interface {
	Extension
	// Rotary returns the frequencies theta'_k (k < dHead/2) of a model
	// trained on trainLen tokens at factor F, and the scale of the rotated
	// queries and keys (the scores are multiplied by its square).
	Rotary(dHead, trainLen int, base, factor float64) (theta []float64, scale float64)
}

// SlopeExtension is an extension of ALiBi: it replaces the slopes.
type SlopeExtension interface {
	Extension
	// Slopes returns the slopes to use at factor F (a new slice).
	Slopes(slopes []float32, factor float64) []float32
}

// RopeTheta returns the rotary frequencies theta_k = base^(-2k/dHead) for
// k < dHead/2 (Su et al.): pair k of a head at position p turns by p·theta_k.
func RopeTheta(dHead int, base float64) []float64 {
	theta := make([]float64, dHead/2)
	for k := range theta {
		theta[k] = math.Pow(base, -2*float64(k)/float64(dHead))
	}
	return theta
}

// RopePI is linear position interpolation (Chen et al. 2023, "Extending
// Context Window of Large Language Models via Positional Interpolation"):
// positions divided by F, that is every frequency divided by F, so that F
// times the training length turns no pair further than training did.
type RopePI struct{}

// Name implements Extension.
func (RopePI) Name() string { return "pi" }

// Scheme implements Extension.
func (RopePI) Scheme() string { return "rope" }

// Rotary implements RotaryExtension: theta_k / F, scale 1.
func (RopePI) Rotary(dHead, _ int, base, factor float64) ([]float64, float64) {
	theta := RopeTheta(dHead, base)
	for k := range theta {
		theta[k] /= factor
	}
	return theta, 1
}

// RopeNTK is "NTK-aware" scaling (bloc97, 2023): the base multiplied by
// F^(d/(d-2)), d the head width, so that the fastest pair keeps its
// frequency and the slowest is interpolated by exactly F.
type RopeNTK struct{}

// Name implements Extension.
func (RopeNTK) Name() string { return "ntk" }

// Scheme implements Extension.
func (RopeNTK) Scheme() string { return "rope" }

// Rotary implements RotaryExtension: the frequencies of base·F^(d/(d-2)),
// scale 1.
func (RopeNTK) Rotary(dHead, _ int, base, factor float64) ([]float64, float64) {
	if factor == 1 {
		return RopeTheta(dHead, base), 1
	}
	d := float64(dHead)
	return RopeTheta(dHead, base*math.Pow(factor, d/(d-2))), 1
}

// RopeDynamicNTK is dynamic NTK scaling (bloc97 and emozilla 2023; Hugging
// Face's "dynamic" rope_scaling): NTK's frequencies at a factor that
// follows the length of the sequence so far, F = max(1, n/L), so that a
// sequence within the training length is the plain model. It is a
// DynamicExtension: the factor given to Rotary is the one of the current
// length.
type RopeDynamicNTK struct{ RopeNTK }

// Name implements Extension.
func (RopeDynamicNTK) Name() string { return "dynamic-ntk" }

// Dynamic implements DynamicExtension.
func (RopeDynamicNTK) Dynamic() {}

// DynamicExtension is an extension whose factor is not fixed but follows
// the length n of the sequence so far: F = max(1, n/L) (DynamicFactor).
type DynamicExtension interface {
	Extension
	// Dynamic marks the extension as one whose factor follows the length.
	Dynamic()
}

// DynamicFactor is the factor of a DynamicExtension for a sequence of n
// tokens of a model trained on trainLen: max(1, n/trainLen).
func DynamicFactor(n, trainLen int) float64 { return max(1, float64(n)/float64(trainLen)) }

// RopeYaRN is YaRN (Peng et al., ICLR 2024): "NTK-by-parts" frequencies
// and an attention temperature. Pair k has the wavelength 2π/theta_k; r_k
// is how many of them fit in the training length, L·theta_k/(2π). Pairs
// that turn fewer than Alpha times over L are interpolated as PI does
// (theta_k/F), pairs that turn more than Beta times are kept, and in
// between the ramp gamma = (r - Alpha)/(Beta - Alpha) mixes the two:
// theta'_k = (1 - gamma) theta_k/F + gamma theta_k. The queries and keys are
// multiplied by 0.1 ln F + 1 (the paper's sqrt(1/t)), the scores thus by its
// square. The ramp is linear in r, as the paper writes it; Hugging Face's
// implementation ramps linearly in k between rounded bounds instead.
type RopeYaRN struct{ Alpha, Beta float64 }

// Name implements Extension.
func (RopeYaRN) Name() string { return "yarn" }

// Scheme implements Extension.
func (RopeYaRN) Scheme() string { return "rope" }

// Rotary implements RotaryExtension.
func (y RopeYaRN) Rotary(dHead, trainLen int, base, factor float64) ([]float64, float64) {
	theta := RopeTheta(dHead, base)
	if factor == 1 {
		return theta, 1
	}
	for k, th := range theta {
		r := float64(trainLen) * th / (2 * math.Pi)
		g := min(1, max(0, (r-y.Alpha)/(y.Beta-y.Alpha)))
		theta[k] = (1-g)*th/factor + g*th
	}
	return theta, 0.1*math.Log(factor) + 1
}

// AlibiInterp is ALiBi position interpolation (Al-Khateeb et al. 2023):
// distances scaled by L/n for an evaluation length n, that is every slope
// divided by F = n/L, so that the farthest key gets the penalty the
// farthest key of training got.
type AlibiInterp struct{}

// Name implements Extension.
func (AlibiInterp) Name() string { return "interp" }

// Scheme implements Extension.
func (AlibiInterp) Scheme() string { return "alibi" }

// Slopes implements SlopeExtension: m_h / F.
func (AlibiInterp) Slopes(slopes []float32, factor float64) []float32 {
	out := make([]float32, len(slopes))
	for h, m := range slopes {
		out[h] = float32(float64(m) / factor)
	}
	return out
}

// ErrUnknownExtension is the error LookupExtension wraps for a name that no
// extension is registered under.
var ErrUnknownExtension = errors.New("unknown extension method")

// extensionRegistry is the set of extensions by name, in registration
// order. It is safe for concurrent use.
type extensionRegistry struct {
	mu     sync.RWMutex
	byName map[string]Extension
	names  []string
}

// extensions is the one registry of extensions: the built-in ones and
// those added with RegisterExtension.
var extensions = func() *extensionRegistry {
	r := &extensionRegistry{byName: map[string]Extension{}}
	for _, e := range []Extension{RopePI{}, RopeNTK{}, RopeDynamicNTK{}, RopeYaRN{Alpha: 1, Beta: 32}, AlibiInterp{}} {
		if err := r.register(e); err != nil {
			panic(err)
		}
	}
	return r
}()

func (r *extensionRegistry) register(e Extension) error {
	name := e.Name()
	if name == "" || strings.ContainsAny(name, " ,:") {
		return fmt.Errorf("register extension: name %q must be a non-empty word", name)
	}
	switch e.(type) {
	case RotaryExtension, SlopeExtension:
	default:
		return fmt.Errorf("register extension %q: it is neither a RotaryExtension nor a SlopeExtension", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byName[name]; ok {
		return fmt.Errorf("register extension: %q is already registered", name)
	}
	r.byName[name] = e
	r.names = append(r.names, name)
	return nil
}

// RegisterExtension adds an extension under its Name. It fails for a name
// already taken, an empty name or one with a space, a comma or a colon
// (cmd/experiment lists extensions as scheme:method), and for an extension
// that is neither a RotaryExtension nor a SlopeExtension.
func RegisterExtension(e Extension) error { return extensions.register(e) }

// LookupExtension returns the extension registered under name. The error
// wraps ErrUnknownExtension and lists the registered names.
func LookupExtension(name string) (Extension, error) {
	extensions.mu.RLock()
	defer extensions.mu.RUnlock()
	if e, ok := extensions.byName[name]; ok {
		return e, nil
	}
	return nil, fmt.Errorf("%w %q; use one of %s", ErrUnknownExtension, name, strings.Join(extensions.names, ", "))
}

// ExtensionsFor returns the names of the extensions that apply to a scheme,
// in registration order.
func ExtensionsFor(scheme string) []string {
	extensions.mu.RLock()
	defer extensions.mu.RUnlock()
	var out []string
	for _, n := range extensions.names {
		if extensions.byName[n].Scheme() == scheme {
			out = append(out, n)
		}
	}
	return out
}

// ExtensionFor returns the extension name for a model of the given scheme,
// or an error naming the extensions that do apply to that scheme.
func ExtensionFor(scheme, name string) (Extension, error) {
	e, err := LookupExtension(name)
	if err != nil {
		return nil, err
	}
	if e.Scheme() != scheme {
		if apply := ExtensionsFor(scheme); len(apply) > 0 {
			return nil, fmt.Errorf("extension %s applies to %s runs, not %s; for %s use %s", name, e.Scheme(), scheme, scheme, strings.Join(apply, ", "))
		}
		return nil, fmt.Errorf("extension %s applies to %s runs, not %s; no extension applies to %s", name, e.Scheme(), scheme, scheme)
	}
	return e, nil
}

package model

import (
	"fmt"

	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/layers/position"
	"gorgonia.org/tensor"
)

// Extend makes every graph built from now on apply an evaluation-time
// extension (position.Extension, by registry name: pi, ntk, dynamic-ntk or
// yarn for a rope model, interp for an alibi model) at the given factor. A
// factor of 0 means each graph's own: its length divided by the training
// length, at least 1 (eval.Perplexity gives every window of a length that
// length's factor, its shorter last window too); a decoding graph has no
// length of its own, so
// decoding with an extension needs a factor. A dynamic extension
// (dynamic-ntk) takes no factor: every sequence has the factor of its own
// length so far, in the full pass and in decoding alike. An empty name removes the extension. Extend
// changes no weight or buffer: the checkpoint of an extended model is the
// trained one. It is refused, with the extensions that do apply, for any
// other pairing of scheme and method, and for a factor that is not finite,
// below 1 or so large that the extension's numbers leave float32's normal
// range (position.CheckFactor).
func (m *Model) Extend(name string, factor float64) error {
	if name == "" {
		m.ext, m.extFactor = nil, 0
		return nil
	}
	e, err := position.ExtensionFor(m.scheme.Name(), name)
	if err != nil {
		return err
	}
	if m.dropped {
		return fmt.Errorf("extension %s: DroPE dropped this model's rotation, so there is nothing for it to extend", name)
	}
	if _, ok := e.(position.DynamicExtension); ok && factor != 0 {
		return fmt.Errorf("extension %s takes its factor from the length (max(1, n/L)); give no factor", name)
	}
	if factor < 1 && factor != 0 {
		return fmt.Errorf("extension factor %v: want at least 1 (or 0: the evaluation length over the training length)", factor)
	}
	if factor != 0 {
		if err := position.CheckFactor(e, m.extensionTarget(), factor); err != nil {
			return err
		}
	}
	m.ext, m.extFactor = e, factor
	return nil
}

// extensionTarget is what position.CheckFactor needs to know of the model.
func (m *Model) extensionTarget() position.ExtensionTarget {
	return position.ExtensionTarget{DHead: m.Config.DHead(), TrainLen: m.Config.TrainLen, Base: layers.RopeBase, Slopes: m.PositionBuffer}
}

// Extension returns the extension set by Extend (nil for none) and its
// factor (0: each graph's own).
func (m *Model) Extension() (position.Extension, float64) { return m.ext, m.extFactor }

// extensionFactor is the factor of the extension for a graph of length
// tokens (decode: a decoding graph).
func (m *Model) extensionFactor(length int, decode bool) (float64, error) {
	if m.extFactor > 0 {
		return m.extFactor, nil
	}
	if decode {
		return 0, fmt.Errorf("decoding with extension %s needs a factor (Extend's factor, the commands' --extend-factor)", m.ext.Name())
	}
	f := max(1, float64(length)/float64(m.Config.TrainLen))
	return f, position.CheckFactor(m.ext, m.extensionTarget(), f)
}

// ropeScaling returns the rotation of a graph of length tokens under the
// extension, the zero value (plain Rope) without one. A dynamic extension
// gives every sequence the frequencies of its own length (decoding too);
// one graph's layers share the result.
func (m *Model) ropeScaling(length int, decode bool) (layers.RopeScaling, error) {
	e, ok := m.ext.(position.RotaryExtension)
	if !ok {
		return layers.RopeScaling{}, nil
	}
	dHead := m.Config.DModel / m.Config.NHeads
	if _, ok := e.(position.DynamicExtension); ok {
		return layers.RopeScaling{Dynamic: layers.NewDynamicRope(
			func(n int) float64 { return position.DynamicFactor(n, m.Config.TrainLen) },
			func(f float64) ([]float64, float64) { return e.Rotary(dHead, m.Config.TrainLen, layers.RopeBase, f) })}, nil
	}
	f, err := m.extensionFactor(length, decode)
	if err != nil {
		return layers.RopeScaling{}, err
	}
	theta, scale := e.Rotary(dHead, m.Config.TrainLen, layers.RopeBase, f)
	return layers.RopeScaling{Theta: theta, Scale: scale}, nil
}

// bufferTensor returns the tensor the graph's position buffer node reads:
// PositionBuffer itself (read in place), or the extension's copy of it.
func (m *Model) bufferTensor(length int, decode bool) (*tensor.Dense, error) {
	buf := m.PositionBuffer
	if e, ok := m.ext.(position.SlopeExtension); ok {
		f, err := m.extensionFactor(length, decode)
		if err != nil {
			return nil, err
		}
		buf = e.Slopes(buf, f)
	}
	return tensor.New(tensor.WithShape(len(buf)), tensor.WithBacking(buf)), nil
}

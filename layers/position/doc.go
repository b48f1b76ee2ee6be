// Package position is the math of the position schemes, without Gorgonia's
// graph: what a model asks of a scheme (Scheme, ModelShape, ParamSpec), the
// registry of schemes by name (Register, Lookup, Names), the built-in
// schemes, the attention biases they hand the tiled kernel (BiasScheme,
// KernelBias, TrainableBias), and the evaluation-time extensions of trained
// positions (Extension, RegisterExtension, ExtensionFor).
//
// Files, one per built-in scheme, named after it: alibi.go (ALiBi's slopes,
// its materialised bias and causal mask, its kernel bias and the scheme
// "alibi"), sinusoidal.go, none.go, rope.go (the scheme's declaration; the
// rotation op is layers.Rope), t5.go, kerple.go, fire.go, fox.go (the
// Forgetting Transformer's gate, GatedScheme), stick-breaking.go
// (stick-breaking attention, StickBreakingScheme), pope.go (PoPE,
// PolarScheme); and scheme.go (the Scheme
// interface), registry.go (the registry, whose list of built-in schemes is
// the one place that names them all), bias.go (the BiasScheme and
// kernel-bias interfaces), distance_bias.go (the per-head distance tables
// ALiBi, T5 and KERPLE share), learned.go (helpers of the learned biases:
// Projector, parameter conversions), extension.go (pi, ntk, dynamic-ntk,
// yarn and interp), factor.go (CheckFactor: the factors an extension can
// take on a model). The Register example adds a scheme from outside the
// package and trains and scores a model with it.
//
// Contracts. A KernelBias adds the bias of one head to one row of visible
// keys (j <= pos) and is read concurrently; Bias32 and Bias64 of a scheme
// compute the same formula in their element type (ALiBi's float64 path
// rounds the slopes to float32 first, as the model stores them), so that
// gradient checks in float64 test the code the float32 model runs. A scheme's Add and Accumulate are each
// other's transpose: Accumulate adds ds into exactly the entries Add read.
// The ALiBi tables are made by AlibiBias, so the formula -m_h*(i-j) has one
// implementation; each entry is -m_h*float32(i-j), one rounded float32
// product (the distance is exact below 2^24).
//
// Imports: position depends on gorgonia.org/tensor (shapes and the
// materialised tables) and layers/internal/vmath; package layers (the
// Gorgonia ops) and model import it, never the other way round.
package position

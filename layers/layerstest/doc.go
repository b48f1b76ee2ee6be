// Package layerstest holds what the tests of layers, layers/position and
// model share and a library user does not need: the references the tiled
// kernel, the position schemes and the model are tested against, and one
// measure of their tolerances.
//
//   - full_bias.go: FullBias, a materialised (heads or 1, qLen, kLen) bias
//     whose every entry is trainable, and FullBiasScheme, the attention bias
//     scheme made of one (the reference every in-kernel scheme equals).
//   - composed.go: the layers built from Gorgonia's own ops (ComposedLinear,
//     ComposedLayerNorm, ComposedSoftmaxRows, ComposedLogSoftmaxRows,
//     ComposedAttention), in float32 or float64.
//   - tolerance.go: RelErr, max|got-want| / max|want|, the relative error
//     every "to 1e-5 relative" bound of those tests means.
//
// It imports position and the kernels' row addition (layers/internal/flash),
// never package layers, so that layers' own tests can import it.
package layerstest

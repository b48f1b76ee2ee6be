package layerstest

import (
	"math"

	"github.com/alibi-go/alibi/layers/position"
	"gonum.org/v1/gonum/floats"
)

// RelErr is the relative error the tests of layers and model bound:
// max_i |got[i]-want[i]| / max_i |want[i]|, computed in float64 (gonum's
// infinity-norm distance over the infinity norm of want). It is +Inf when
// either slice holds a NaN, so that a bound written as e > tol fails too,
// and the absolute error max_i |got[i]-want[i]| when want is all zeros. It
// panics when the lengths differ.
func RelErr[T, U position.Float](got []T, want []U) float64 {
	if len(got) != len(want) {
		panic("layerstest.RelErr: slices of different lengths")
	}
	g, w := toFloat64(got), toFloat64(want)
	if floats.HasNaN(g) || floats.HasNaN(w) {
		return math.Inf(1)
	}
	diff := floats.Distance(g, w, math.Inf(1))
	if scale := floats.Norm(w, math.Inf(1)); scale != 0 {
		return diff / scale
	}
	return diff
}

// toFloat64 returns x converted to float64 (x itself when it is one).
func toFloat64[T position.Float](x []T) []float64 {
	if f, ok := any(x).([]float64); ok {
		return f
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

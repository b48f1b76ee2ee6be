package layers

import "github.com/alibi-go/alibi/layers/internal/vmath"

// AdamWStep applies one AdamW update to the weights w with gradients g and
// first and second moments m and v (all of the same length), in float32 with
// each operation rounded, in this order:
//
//	m = beta1*m + (1-beta1)*g
//	v = beta2*v + ((1-beta2)*g)*g
//	w = w*shrink - (stepSize*m) / (float32(sqrt(v))*invSqrtBC2 + eps)
//
// It runs the package's vector kernels (AVX-512, AVX2 or portable Go, which
// give bit-identical results).
func AdamWStep(w, g, m, v []float32, beta1, beta2, eps, shrink, stepSize, invSqrtBC2 float32) {
	vmath.AdamW(w, g, m, v, vmath.AdamWCoeffs{
		Beta1: beta1, Beta2: beta2, Eps: eps, Shrink: shrink, StepSize: stepSize, InvSqrtBC2: invSqrtBC2,
	})
}

// ScaleInPlace sets x[i] *= s, each product rounded to float32 (the bits of
// the plain loop), on the package's vector kernels.
func ScaleInPlace(x []float32, s float32) { vmath.Scale(x, s) }

// Package vmath provides fast float32 vector kernels for the hot paths of
// the transformer layers: the exponential (softmax) and the softmax's
// gradient, the exact GELU and its derivative, the row statistics and
// normalisation of LayerNorm and its backward pass, the AdamW update, the
// element-wise sum of the residual connections and of gradients and the
// element-wise product (Mul), the dot products of the attention's rows
// (Dot4), and the float64 logarithm of the attention's log-sum-exp (Log64,
// with the bits of math.Log).
//
// Three paths implement the kernels (see Path) and the fastest one the CPU
// supports is chosen at run time: AVX-512 (16 lanes), AVX2 with FMA (8
// lanes), and portable Go, the only path on other architectures and with
// the purego build tag. The environment variable ALIBI_SIMD=avx2 or
// ALIBI_SIMD=portable selects a slower path. Each path is deterministic: the
// result depends only on the input values and the slice lengths.
//
// The assembly paths give bit-identical results. The exponential and GELU
// kernels use fused multiply-adds and process the first len &^ 7 elements in
// assembly and the rest with the portable code, which does not fuse, so the
// portable path differs from them by a few float32 ulps. The LayerNorm and
// AdamW kernels use no fused operations, and all three paths give
// bit-identical results; their reductions add float64 terms in 16
// interleaved partial sums (element i to sum i mod 16) combined in a fixed
// order.
//
// The exponential uses the range reduction x = k ln2 + r, |r| <= ln2/2, with
// a two-part ln2 and a degree-6 Taylor polynomial for e^r, which is within
// about 3e-7 relative error of the exact result. The normal cumulative
// distribution function in GELU uses the Abramowitz and Stegun 7.1.26
// approximation of erfc (absolute error 1.5e-7), whose exp(-z^2) factor is
// the same exp(-x^2/2) that appears in the GELU derivative, so each element
// costs one exponential.
//
// Where a destination and a source slice are both passed they must have the
// same length (the functions panic otherwise) and may be the same slice, but
// must not otherwise overlap.
package vmath

import "math"

// Exp sets dst[i] = e^x[i].
//
// The result is exactly 0 for x[i] < -87.33654 (so a large negative mask
// value such as -1e9 gives exactly 0, and results that would be subnormal are
// flushed to 0), +Inf for x[i] > 88.72283, and NaN for NaN. Elsewhere the
// relative error is below 5e-7.
func Exp(dst, x []float32) {
	checkLen(len(dst), len(x))
	n := len(x) &^ 7
	switch {
	case n == 0 || kernels.Path() == Portable:
		n = 0
	case kernels.Path() == AVX512:
		expAVX512(&dst[0], &x[0], n)
	default:
		expAVX2(&dst[0], &x[0], n)
	}
	expGo(dst[n:], x[n:])
}

// ExpSubSum sets x[i] = e^(x[i]-shift) in place, with the accuracy and
// special cases of Exp applied to the float32 difference x[i]-shift, and
// returns the sum of the results, the denominator of a softmax when shift
// is the maximum of x. The sum is accumulated in float64 (the assembly
// kernel first adds up to 4 terms in float32, in a fixed order), so its
// relative error is below 2e-7 of the exact sum of the stored results.
func ExpSubSum(x []float32, shift float32) float32 {
	var sum float64
	n := len(x) &^ 7
	switch {
	case n == 0 || kernels.Path() == Portable:
		n = 0
	case kernels.Path() == AVX512:
		sum = expSubSumAVX512(&x[0], n, shift)
	default:
		sum = expSubSumAVX2(&x[0], n, shift)
	}
	return float32(sum + expSubSumGo(x[n:], shift))
}

// ExpSub is ExpSubSum without the sum: the same x. On the AVX-512 path its
// kernel leaves out the sum's conversions and additions, about a quarter
// of the operations (a softmax's backward pass recomputes the
// probabilities from a known log-sum-exp and needs no sum).
func ExpSub(x []float32, shift float32) {
	n := len(x) &^ 7
	switch {
	case n == 0 || kernels.Path() == Portable:
		n = 0
	case kernels.Path() == AVX512:
		expSubAVX512(&x[0], n, shift)
	default:
		expSubSumAVX2(&x[0], n, shift)
	}
	expSubSumGo(x[n:], shift)
}

// ExpAddSub sets x[i] = e^(x[i]+b[i]-shift) for i < len(b) <= len(x) and
// x[i] = e^(x[i]-shift) beyond, with the bits of Add(x[:len(b)], x, b)
// followed by ExpSub(x, shift): a softmax's backward pass recomputing its
// probabilities from the scores, their bias and the log-sum-exp. On the
// AVX-512 path one pass does both (when len(b) <= len(x)&^7), so that the
// scores are read and written once.
func ExpAddSub(x, b []float32, shift float32) {
	if len(b) > len(x) {
		panic("vmath: ExpAddSub's bias is longer than its row")
	}
	if n := len(x) &^ 7; n > 0 && len(b) <= n && kernels.Path() == AVX512 {
		bp := &x[0] // not read when b is empty
		if len(b) > 0 {
			bp = &b[0]
		}
		expAddSubAVX512(&x[0], bp, len(b), n, shift)
		expSubSumGo(x[n:], shift)
		return
	}
	Add(x[:len(b)], x[:len(b)], b)
	ExpSub(x, shift)
}

// AddMax sets x[i] += b[i] in place and returns the maximum of the updated
// x, or -Inf if x is empty. If an updated element is NaN the returned value
// is unspecified (NaN or the maximum of some of the other elements).
func AddMax(x, b []float32) float32 {
	checkLen(len(x), len(b))
	switch {
	case len(x) == 0 || kernels.Path() == Portable:
		return addMaxGo(x, b)
	case kernels.Path() == AVX512:
		return addMaxAVX512(&x[0], &b[0], len(x))
	}
	m := float32(math.Inf(-1))
	n := len(x) &^ 7
	if n > 0 {
		m = addMaxAVX2(&x[0], &b[0], n)
	}
	return max(m, addMaxGo(x[n:], b[n:]))
}

// Add sets dst[i] = a[i] + b[i]: the residual connection's sum and the
// sum of two gradients. IEEE addition is exact to the bit on every path, so
// all three give the same result.
func Add(dst, a, b []float32) { elementwise(dst, a, b, addAVX512, addAVX2, addGo) }

// elementwise runs an element-wise kernel of two operands, dst[i] = a[i]
// op b[i], on the path the CPU supports: avx512 on every element (masked
// tail), avx2 on the first len&^7 and portable on the rest.
func elementwise(dst, a, b []float32, avx512, avx2 func(dst, a, b *float32, n int), portable func(dst, a, b []float32)) {
	checkLen(len(dst), len(a))
	checkLen(len(dst), len(b))
	n := len(dst)
	switch {
	case n == 0 || kernels.Path() == Portable:
		n = 0
	case kernels.Path() == AVX512:
		avx512(&dst[0], &a[0], &b[0], n)
		return
	default:
		if n &^= 7; n > 0 {
			avx2(&dst[0], &a[0], &b[0], n)
		}
	}
	portable(dst[n:], a[n:], b[n:])
}

// AddTo sets dst[i] += src[i]: for float32 with AddMax (whose maximum is
// not needed), for float64 in plain Go, so that the float64 references of
// the attention kernel and the position biases add rows the same way.
func AddTo[T ~float32 | ~float64](dst, src []T) {
	AddToMax(dst, src)
}

// ExpSubOf is ExpSub for float32 and, for float64, x[i] = e^(x[i]-shift)
// with math.Exp of the difference.
func ExpSubOf[T ~float32 | ~float64](x []T, shift T) {
	if x32, ok := any(x).([]float32); ok {
		ExpSub(x32, float32(shift))
		return
	}
	for i, v := range x {
		x[i] = T(math.Exp(float64(v - shift)))
	}
}

// ExpAddSubOf is ExpAddSub for float32 and the same steps for float64:
// AddTo(x[:len(b)], b), then ExpSubOf(x, shift).
func ExpAddSubOf[T ~float32 | ~float64](x, b []T, shift T) {
	if x32, ok := any(x).([]float32); ok {
		ExpAddSub(x32, any(b).([]float32), float32(shift))
		return
	}
	AddTo(x[:len(b)], b)
	ExpSubOf(x, shift)
}

// MaxOf returns the maximum of x (-Inf if it is empty): for float32 with
// Max, for float64 in plain Go.
func MaxOf[T ~float32 | ~float64](x []T) T {
	if x32, ok := any(x).([]float32); ok {
		return T(Max(x32))
	}
	m := T(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

// AddToMax is AddTo that also returns the maximum of the updated dst (-Inf
// if it is empty; unspecified if an element is NaN, as for AddMax): the
// attention's softmax needs the maximum of each biased row, and taking it
// while the row is in registers saves a pass over it.
func AddToMax[T ~float32 | ~float64](dst, src []T) T {
	if d, ok := any(dst).([]float32); ok {
		return T(AddMax(d, any(src).([]float32)))
	}
	src = src[:len(dst)]
	m := T(math.Inf(-1))
	for i := range dst {
		dst[i] += src[i]
		m = max(m, dst[i])
	}
	return m
}

// Max returns the maximum of x, or -Inf if x is empty. If x contains NaN the
// result is unspecified (NaN or the maximum of some of the other elements).
func Max(x []float32) float32 {
	switch {
	case len(x) == 0 || kernels.Path() == Portable:
		return maxGo(x)
	case kernels.Path() == AVX512:
		return maxAVX512(&x[0], len(x))
	}
	m := float32(math.Inf(-1))
	n := len(x) &^ 7
	if n > 0 {
		m = maxAVX2(&x[0], n)
	}
	return max(m, maxGo(x[n:]))
}

// Log64 sets dst[i] = math.Log(x[i]), with its bits. On the AVX-512 path
// it takes 8 elements at a time through the operations of Go's math.Log on
// amd64 (the math package's assembly), lane by lane in the same order and
// without fused multiply-adds, and redoes with math.Log the elements that
// are not positive, normal and finite and the last len%8; elsewhere it
// calls math.Log. math.Log is a chain of some forty dependent operations,
// a division among them, so one call at a time waits on each; eight lanes
// at once keep the units busy (the attention's log-sum-exp of each row).
func Log64(dst, x []float64) {
	checkLen(len(dst), len(x))
	n := 0
	if kernels.Path() == AVX512 {
		n = len(x) &^ 7
	}
	if n > 0 {
		logAVX512(&dst[0], &x[0], n)
		for i, v := range x[:n] {
			if !(v >= 0x1p-1022 && v <= math.MaxFloat64) {
				dst[i] = math.Log(v)
			}
		}
	}
	for i, v := range x[n:] {
		dst[n+i] = math.Log(v)
	}
}

// Scale sets x[i] *= s in place.
func Scale(x []float32, s float32) {
	switch {
	case len(x) == 0 || kernels.Path() == Portable:
		scaleGo(x, s)
	case kernels.Path() == AVX512:
		scaleAVX512(&x[0], len(x), s)
	default:
		n := len(x) &^ 7
		if n > 0 {
			scaleAVX2(&x[0], n, s)
		}
		scaleGo(x[n:], s)
	}
}

// SoftmaxGrad sets p[i] = p[i]·(dp[i] - d) in place: the gradient of a
// softmax row's scores from its probabilities p, their gradient dp and
// d = Σ p[i]·dp[i].
//
// Subnormal numbers are flushed, on every path: a subnormal input reads as
// zero, and a difference or product below 2^-126 in magnitude is stored as
// a zero of its sign (the assembly kernels set MXCSR's flush-to-zero and
// denormals-are-zero bits; the portable code flushes in software). Small
// probabilities of distant keys make such products common, and on Intel
// cores each one would take a microcode assist of about a hundred cycles.
func SoftmaxGrad(p, dp []float32, d float32) {
	checkLen(len(p), len(dp))
	switch {
	case len(p) == 0:
	case kernels.Path() == Portable:
		softmaxGradGo(p, dp, d)
	case kernels.Path() == AVX512:
		softmaxGradAVX512(&p[0], &dp[0], len(p), d)
	default:
		n := len(p) &^ 7
		if n > 0 {
			softmaxGradAVX2(&p[0], &dp[0], n, d)
		}
		softmaxGradGo(p[n:], dp[n:], d)
	}
}

// GELU sets dst[i] to the exact (erf-based) GELU of x[i], x Φ(x), where
// Φ(x) = (1 + erf(x/√2))/2 is the standard normal cumulative distribution
// function, evaluated with the Abramowitz and Stegun 7.1.26 approximation of
// erf.
//
// The absolute error is below 1e-6·max(1, |x|). GELU(x) = x for large
// positive x (including +Inf), 0 (possibly -0) for large negative x
// (including -Inf), and NaN for NaN.
func GELU(dst, x []float32) {
	checkLen(len(dst), len(x))
	n := len(x) &^ 7
	switch {
	case n == 0 || kernels.Path() == Portable:
		n = 0
	case kernels.Path() == AVX512:
		geluAVX512(&dst[0], &x[0], n)
	default:
		geluAVX2(&dst[0], &x[0], n)
	}
	geluGo(dst[n:], x[n:])
}

// GELUGrad sets dst[i] = g[i]·GELU'(x[i]), where GELU'(x) = Φ(x) + x φ(x)
// and φ(x) = exp(-x²/2)/√(2π) is the standard normal density; it is the
// backward pass of GELU for the upstream gradient g. dst may be x or g.
//
// The absolute error is below 2e-6·max(1, |g|). For large |x| (including
// ±Inf) GELU'(x) is 1 for positive and 0 for negative x, so the result is
// g[i] or ±0 (NaN if g[i] is infinite or NaN); NaN x gives NaN.
func GELUGrad(dst, x, g []float32) {
	checkLen(len(dst), len(x))
	checkLen(len(g), len(x))
	n := len(x) &^ 7
	switch {
	case n == 0 || kernels.Path() == Portable:
		n = 0
	case kernels.Path() == AVX512:
		geluGradAVX512(&dst[0], &x[0], &g[0], n)
	default:
		geluGradAVX2(&dst[0], &x[0], &g[0], n)
	}
	geluGradGo(dst[n:], x[n:], g[n:])
}

// GELUAndGrad sets h[i] = GELU(x[i]) and d[i] = GELU'(x[i]), for a
// forward pass that keeps the derivative for its backward pass instead of
// x: h has the bits of GELU, and Mul(g, g, d) those of GELUGrad(g, x, g),
// on every path (the derivative is the factor GELUGrad rounds before it
// multiplies by g; both share one exponential and one division). d may be
// x; h must not overlap either.
func GELUAndGrad(h, d, x []float32) {
	checkLen(len(h), len(x))
	checkLen(len(d), len(x))
	n := len(x) &^ 7
	switch {
	case n == 0 || kernels.Path() == Portable:
		n = 0
	case kernels.Path() == AVX512:
		geluBothAVX512(&h[0], &d[0], &x[0], n)
	default:
		geluBothAVX2(&h[0], &d[0], &x[0], n)
	}
	geluBothGo(h[n:], d[n:], x[n:])
}

// Mul sets dst[i] = a[i]·b[i]. A product of two float32 is exact to the
// bit whichever code performs it, so all paths give the same result.
func Mul(dst, a, b []float32) { elementwise(dst, a, b, mulAVX512, mulAVX2, mulGo) }

// Dot4 returns the sum of a[i]·b[i] (b at least as long as a) in a fixed
// order: four partial sums, s_j of the products of the elements i = j mod 4
// among the first len(a)&^3, in order, s_0 then adding the rest, and the
// result (s0+s1)+(s2+s3), each product and sum rounded to T. The order is
// that of the plain Go loop with four accumulators, so every path gives the
// same bits; for float32 the assembly paths keep the four sums in the lanes
// of one 128-bit register (the attention's row dots over a head's 32 or 64
// values, and the small-M products' dot products); float64 runs the loop.
func Dot4[T ~float32 | ~float64](a, b []T) T {
	b = b[:len(a)]
	if a32, ok := any(a).([]float32); ok && len(a) > 0 && kernels.Path() != Portable {
		return T(dot4AVX(&a32[0], &any(b).([]float32)[0], len(a)))
	}
	return dot4Go(a, b)
}

// Dot4Rows sets d[r] = Dot4(a[r*lda:][:n], b[r*ldb:][:n]) for every r <
// len(d), with those bits. For float32 on the assembly paths, when n is a
// multiple of 4, one call does four rows at a time, their additions
// overlapping (the attention's backward pass takes the dot of each row of
// dO with its row of O, over a head's 32 or 64 values).
func Dot4Rows[T ~float32 | ~float64](d, a []T, lda int, b []T, ldb, n int) {
	r := 0
	if d32, ok := any(d).([]float32); ok && n > 0 && n%4 == 0 && len(d) >= 4 && kernels.Path() != Portable {
		r = len(d) &^ 3
		_ = any(a).([]float32)[(r-1)*lda+n-1] // the last element the assembly reads
		_ = any(b).([]float32)[(r-1)*ldb+n-1]
		dot4RowsAVX(&d32[0], &any(a).([]float32)[0], lda, &any(b).([]float32)[0], ldb, r, n)
	}
	for ; r < len(d); r++ {
		d[r] = Dot4(a[r*lda:][:n], b[r*ldb:][:n])
	}
}

func checkLen(a, b int) {
	if a != b {
		panic("vmath: slice length mismatch")
	}
}

// Log1pUnit returns ln(1 + e) for e in [0, 1] (the softplus of a score is
// max(z, 0) + Log1pUnit(e^-|z|)) with a relative error below 1e-9: the
// series 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...) of s = e / (2 + e) <= 1/3,
// to s^19, without math.Log1p's branches and range reduction.
func Log1pUnit(e float64) float64 {
	s := e / (2 + e)
	s2 := s * s
	p := 1.0 / 19
	for _, c := range [...]float64{1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1} {
		p = p*s2 + c
	}
	return 2 * s * p
}

package vmath

import "math"

// LayerNorm and AdamW kernels. None of them fuses operations, so the three
// paths give bit-identical results, and the order of the operations is
// spelled out in each doc comment.

// lanes is the number of interleaved partial sums of the float64 row
// reductions: element i of a row is added to partial sum i mod lanes.
const lanes = 16

// reduceLanes adds the partial sums in a fixed order: s[i] = acc[i] +
// acc[i+8], t[i] = s[i] + s[i+4], then (t[0]+t[2]) + (t[1]+t[3]).
func reduceLanes(acc *[lanes]float64) float64 {
	var s [8]float64
	for i := range s {
		s[i] = acc[i] + acc[i+8]
	}
	var t [4]float64
	for i := range t {
		t[i] = s[i] + s[i+4]
	}
	return (t[0] + t[2]) + (t[1] + t[3])
}

// laneSplit returns how many leading elements of a row of n the active
// path's lane kernels process (a multiple of lanes); the portable code adds
// the rest, starting again at lane 0.
func laneSplit(n int) int {
	if kernels.Path() == Portable {
		return 0
	}
	return n &^ (lanes - 1)
}

// Moments returns the mean of x and the sum of the squared deviations from
// it, in float64: mean = Σ float64(x[i]) / len(x), then sqDev =
// Σ d*d with d = float64(x[i]) - mean, each sum in 16 partial sums (see the
// package documentation). Both are 0 for an empty x. They are the row
// statistics of LayerNorm: the variance is sqDev/len(x).
func Moments(x []float32) (mean, sqDev float64) {
	if len(x) == 0 {
		return 0, 0
	}
	n := laneSplit(len(x))
	var acc [lanes]float64
	if n > 0 {
		if kernels.Path() == AVX512 {
			sumLanesAVX512(&x[0], n, &acc)
		} else {
			sumLanesAVX2(&x[0], n, &acc)
		}
	}
	sumLanesGo(x[n:], &acc)
	mean = reduceLanes(&acc) / float64(len(x))
	acc = [lanes]float64{}
	if n > 0 {
		if kernels.Path() == AVX512 {
			sqDevLanesAVX512(&x[0], n, mean, &acc)
		} else {
			sqDevLanesAVX2(&x[0], n, mean, &acc)
		}
	}
	sqDevLanesGo(x[n:], mean, &acc)
	return mean, reduceLanes(&acc)
}

// Normalize sets out[i] = (x[i]-mean)*rstd*gamma[i] + beta[i] in float32,
// left to right: the normalise-scale-shift pass of LayerNorm. out may be x.
func Normalize(out, x, gamma, beta []float32, mean, rstd float32) {
	checkLen(len(out), len(x))
	checkLen(len(gamma), len(x))
	checkLen(len(beta), len(x))
	switch {
	case len(x) == 0 || kernels.Path() == Portable:
		normalizeGo(out, x, gamma, beta, mean, rstd)
	case kernels.Path() == AVX512:
		normalizeAVX512(&out[0], &x[0], &gamma[0], &beta[0], len(x), mean, rstd)
	default:
		n := len(x) &^ 7
		if n > 0 {
			normalizeAVX2(&out[0], &x[0], &gamma[0], &beta[0], n, mean, rstd)
		}
		normalizeGo(out[n:], x[n:], gamma[n:], beta[n:], mean, rstd)
	}
}

// LayerNormRows is LayerNorm's forward on the rows of x, each of d
// elements: for row r, with mean, sqDev = Moments(row) and rstd =
// 1/sqrt(sqDev/d + eps) in float64, it stores mean and rstd in stats[2r]
// and stats[2r+1] (unless stats is nil) and sets the row of out with
// Normalize(float32(mean), float32(rstd)). The results are those bits; on
// the AVX-512 path, when d is a multiple of 16, one assembly call does
// every row. out may be x.
func LayerNormRows(out, x, gamma, beta []float32, d int, eps float64, stats []float64) {
	if d <= 0 {
		return
	}
	rows := len(x) / d
	checkLen(len(x), rows*d)
	checkLen(len(out), len(x))
	checkLen(len(gamma), d)
	checkLen(len(beta), d)
	if stats != nil {
		checkLen(len(stats), 2*rows)
	}
	if rows == 0 {
		return
	}
	if kernels.Path() == AVX512 && d%lanes == 0 {
		var st *float64
		if stats != nil {
			st = &stats[0]
		}
		lnRowsAVX512(&out[0], &x[0], &gamma[0], &beta[0], rows, d, eps, st)
		return
	}
	for r := range rows {
		xr := x[r*d : (r+1)*d]
		mean, sqDev := Moments(xr)
		rstd := 1 / math.Sqrt(sqDev/float64(d)+eps)
		if stats != nil {
			stats[2*r], stats[2*r+1] = mean, rstd
		}
		Normalize(out[r*d:(r+1)*d], xr, gamma, beta, float32(mean), float32(rstd))
	}
}

// LayerNormGradSums is the first pass of the LayerNorm backward for one row.
// With xh = (float64(x[i]) - mean) * rstd and g = float64(dy[i]), it adds
// g*xh to dGamma[i] and g to dBeta[i], and returns sg = Σ g*gamma[i] and
// sgx = Σ (g*gamma[i])*xh, in float64, each in 16 partial sums.
func LayerNormGradSums(x, dy, gamma []float32, mean, rstd float64, dGamma, dBeta []float64) (sg, sgx float64) {
	checkLen(len(dy), len(x))
	checkLen(len(gamma), len(x))
	checkLen(len(dGamma), len(x))
	checkLen(len(dBeta), len(x))
	n := laneSplit(len(x))
	var acc [2 * lanes]float64
	if n > 0 {
		if kernels.Path() == AVX512 {
			lnGradSumsAVX512(&x[0], &dy[0], &gamma[0], n, mean, rstd, &dGamma[0], &dBeta[0], &acc)
		} else {
			lnGradSumsAVX2(&x[0], &dy[0], &gamma[0], n, mean, rstd, &dGamma[0], &dBeta[0], &acc)
		}
	}
	lnGradSumsGo(x[n:], dy[n:], gamma[n:], mean, rstd, dGamma[n:], dBeta[n:], &acc)
	return reduceLanes((*[lanes]float64)(acc[:lanes])), reduceLanes((*[lanes]float64)(acc[lanes:]))
}

// LayerNormGradX is the second pass of the LayerNorm backward for one row:
// with xh and g as in LayerNormGradSums, it sets
// dx[i] = float32(rstd * ((g*gamma[i] - mg) - xh*mgx)), where mg and mgx are
// the means of g*gamma and g*gamma*xh over the row. dx may be x or dy.
func LayerNormGradX(dx, x, dy, gamma []float32, mean, rstd, mg, mgx float64) {
	checkLen(len(dx), len(x))
	checkLen(len(dy), len(x))
	checkLen(len(gamma), len(x))
	switch {
	case len(x) == 0 || kernels.Path() == Portable:
		lnGradXGo(dx, x, dy, gamma, mean, rstd, mg, mgx)
	case kernels.Path() == AVX512:
		lnGradXAVX512(&dx[0], &x[0], &dy[0], &gamma[0], len(x), mean, rstd, mg, mgx)
	default:
		n := len(x) &^ 7
		if n > 0 {
			lnGradXAVX2(&dx[0], &x[0], &dy[0], &gamma[0], n, mean, rstd, mg, mgx)
		}
		lnGradXGo(dx[n:], x[n:], dy[n:], gamma[n:], mean, rstd, mg, mgx)
	}
}

// lnGradRowsMaxD is the longest row lnGradRowsAVX512 takes: it keeps 16
// bytes an element of two rows in its 16 KiB frame.
const lnGradRowsMaxD = 512

// LayerNormGradRows is the LayerNorm backward of the rows of x (each of d
// elements) with the gradient dy: for row r, whose mean and reciprocal
// standard deviation are stats[2r] and stats[2r+1], it runs
// LayerNormGradSums (adding to dGamma and dBeta, d elements each) and then
// LayerNormGradX with the means sg/d and sgx/d, writing row r of dx. The
// results are those bits; on the AVX-512 path, when d is a multiple of 16
// and at most lnGradRowsMaxD, one assembly call does every row, without
// the per-row calls' overhead and without computing each element's xh and
// g*gamma twice (BenchmarkLayerNormGradRows).
func LayerNormGradRows(dx, x, dy, gamma []float32, d int, stats, dGamma, dBeta []float64) {
	if d <= 0 {
		return
	}
	rows := len(x) / d
	checkLen(len(x), rows*d)
	checkLen(len(dx), len(x))
	checkLen(len(dy), len(x))
	checkLen(len(gamma), d)
	checkLen(len(stats), 2*rows)
	checkLen(len(dGamma), d)
	checkLen(len(dBeta), d)
	if rows == 0 {
		return
	}
	if kernels.Path() == AVX512 && d%lanes == 0 && d <= lnGradRowsMaxD {
		lnGradRowsAVX512(&dx[0], &x[0], &dy[0], &gamma[0], rows, d, &stats[0], &dGamma[0], &dBeta[0])
		return
	}
	for r := range rows {
		xr, gr := x[r*d:(r+1)*d], dy[r*d:(r+1)*d]
		mean, rstd := stats[2*r], stats[2*r+1]
		sg, sgx := LayerNormGradSums(xr, gr, gamma, mean, rstd, dGamma, dBeta)
		LayerNormGradX(dx[r*d:(r+1)*d], xr, gr, gamma, mean, rstd, sg/float64(d), sgx/float64(d))
	}
}

// AdamWCoeffs are the per-step constants of AdamW.
type AdamWCoeffs struct {
	Beta1, Beta2 float32 // moment decay rates
	Eps          float32 // added to the bias-corrected root of the second moment
	Shrink       float32 // weight decay factor, 1 - lr*decay (1 for no decay)
	StepSize     float32 // lr / (1 - Beta1^t)
	InvSqrtBC2   float32 // 1 / sqrt(1 - Beta2^t)
}

// AdamW applies one AdamW step to the weights w with gradients g and first
// and second moments m and v, all of the same length, in float32 with each
// operation rounded, in this order:
//
//	m = Beta1*m + (1-Beta1)*g
//	v = Beta2*v + ((1-Beta2)*g)*g
//	w = w*Shrink - (StepSize*m) / (sqrt(v)*InvSqrtBC2 + Eps)
//
// where sqrt is the correctly rounded float32 square root (equal to
// float32(math.Sqrt(float64(v)))).
func AdamW(w, g, m, v []float32, c AdamWCoeffs) {
	checkLen(len(g), len(w))
	checkLen(len(m), len(w))
	checkLen(len(v), len(w))
	k := adamWConsts(c)
	switch {
	case len(w) == 0 || kernels.Path() == Portable:
		adamWGo(w, g, m, v, &k)
	case kernels.Path() == AVX512:
		adamWAVX512(&w[0], &g[0], &m[0], &v[0], len(w), &k)
	default:
		n := len(w) &^ 7
		if n > 0 {
			adamWAVX2(&w[0], &g[0], &m[0], &v[0], n, &k)
		}
		adamWGo(w[n:], g[n:], m[n:], v[n:], &k)
	}
}

// adamWK is the constant block read by the AdamW kernels.
type adamWK struct {
	b1, c1, b2, c2, eps, shrink, step, invSqrtBC2 float32 // c1 = 1-b1, c2 = 1-b2
}

func adamWConsts(c AdamWCoeffs) adamWK {
	return adamWK{
		b1: c.Beta1, c1: 1 - c.Beta1, b2: c.Beta2, c2: 1 - c.Beta2,
		eps: c.Eps, shrink: c.Shrink, step: c.StepSize, invSqrtBC2: c.InvSqrtBC2,
	}
}

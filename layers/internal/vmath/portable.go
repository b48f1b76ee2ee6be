package vmath

import "math"

// Constants of the exponential. Arguments below expLo give 0 and above expHi
// give +Inf. In between, x = k ln2 + r with k = round(x log2e), computed by
// adding roundMagic (1.5·2^23), which leaves k in the low mantissa bits of the
// sum; ln2 is split in two parts so that k·ln2Hi is exact. For x in
// [expLo, expHi] the scaling by 2^k can be done by adding k to the exponent
// field of e^r: for k = -126 (the lowest) r is positive, so e^r >= 1, and for
// k = 128 (the highest) r is negative, so e^r < 1.
const (
	expLo      = -87.33654
	expHi      = 88.72283
	log2e      = 1.44269504088896341
	ln2Hi      = 0.693145751953125
	ln2Lo      = 1.42860682030941723212e-6
	roundMagic = 12582912

	// Taylor coefficients of e^r beyond the linear term.
	expC2 = 1.0 / 2
	expC3 = 1.0 / 6
	expC4 = 1.0 / 24
	expC5 = 1.0 / 120
	expC6 = 1.0 / 720
)

// Constants of GELU. erfc(z) ≈ t(a1 + t(a2 + t(a3 + t(a4 + t a5)))) e^(-z²)
// with t = 1/(1 + p z) (Abramowitz and Stegun 7.1.26); with z = |x|/√2,
// halfErfc = erfc(z)/2 uses pScaled = p/√2 and the halved coefficients b_i.
const (
	pScaled    = 0.3275911 / math.Sqrt2
	b1         = 0.254829592 / 2
	b2         = -0.284496736 / 2
	b3         = 1.421413741 / 2
	b4         = -1.453152027 / 2
	b5         = 1.061405429 / 2
	invSqrt2Pi = 0.398942280401432677939946059934381868
)

// exp1 is e^x in float32 arithmetic; see Exp.
func exp1(x float32) float32 {
	if x < expLo {
		return 0
	}
	if !(x <= expHi) {
		return x + float32(math.Inf(1)) // +Inf, or NaN for NaN
	}
	return expCore(x)
}

// expCore is e^x for x in [expLo, expHi].
func expCore(x float32) float32 {
	t := x*log2e + roundMagic
	k := t - roundMagic
	r := x - k*ln2Hi - k*ln2Lo
	p := 1 + r*(1+r*(expC2+r*(expC3+r*(expC4+r*(expC5+r*expC6)))))
	return math.Float32frombits(math.Float32bits(p) + math.Float32bits(t)<<23)
}

// halfErfcPhi returns erfc(|x|/√2)/2 and e^(-x²/2), the latter 0 for
// |x| > 13.2 or so. For x < 0 the first is Φ(x), for x >= 0 it is 1 - Φ(x).
func halfErfcPhi(x float32) (h, e float32) {
	a := -0.5 * x * x
	if a >= expLo {
		e = expCore(a)
	}
	t := 1 / (1 + pScaled*abs(x))
	h = t * (b1 + t*(b2+t*(b3+t*(b4+t*b5)))) * e
	return h, e
}

// cdf returns Φ(x) from h = erfc(|x|/√2)/2.
func cdf(x, h float32) float32 {
	if math.Float32bits(x)&(1<<31) != 0 {
		return h
	}
	return 1 - h
}

func abs(x float32) float32 {
	return math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
}

// gelu1 is GELU(x); see GELU.
func gelu1(x float32) float32 {
	if x < -math.MaxFloat32 {
		x = -math.MaxFloat32 // -Inf: x Φ(x) = -MaxFloat32 · 0 instead of NaN
	}
	h, _ := halfErfcPhi(x)
	return x * cdf(x, h)
}

// geluGrad1 is g·GELU'(x); see GELUGrad.
func geluGrad1(x, g float32) float32 { return geluDeriv1(x) * g }

// geluDeriv1 is GELU'(x), rounded to float32 before geluGrad1 multiplies
// it by g.
func geluDeriv1(x float32) float32 {
	// Clamp ±Inf so that x φ(x) = ±MaxFloat32 · 0 instead of NaN.
	if x < -math.MaxFloat32 {
		x = -math.MaxFloat32
	} else if x > math.MaxFloat32 {
		x = math.MaxFloat32
	}
	h, e := halfErfcPhi(x)
	return cdf(x, h) + x*e*invSqrt2Pi
}

func expGo(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = exp1(v)
	}
}

func expSubSumGo(x []float32, shift float32) float64 {
	var sum float64
	for i, v := range x {
		e := exp1(v - shift)
		x[i] = e
		sum += float64(e)
	}
	return sum
}

func addGo(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

func addMaxGo(x, b []float32) float32 {
	b = b[:len(x)]
	m := float32(math.Inf(-1))
	for i := range x {
		x[i] += b[i]
		m = max(m, x[i])
	}
	return m
}

func maxGo(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

func scaleGo(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

func geluGo(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = gelu1(v)
	}
}

func geluBothGo(h, d, x []float32) {
	h, d = h[:len(x)], d[:len(x)]
	for i, v := range x {
		h[i], d[i] = gelu1(v), geluDeriv1(v)
	}
}

func mulGo(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

func geluGradGo(dst, x, g []float32) {
	dst, g = dst[:len(x)], g[:len(x)]
	for i, v := range x {
		dst[i] = geluGrad1(v, g[i])
	}
}

// The portable LayerNorm and AdamW kernels. The explicit float32 and float64
// conversions of products keep compilers that fuse multiply-adds (arm64,
// amd64 v3) from doing so, so that the results match the assembly.

// sumLanesGo adds float64(x[i]) to acc[i mod lanes].
func sumLanesGo(x []float32, acc *[lanes]float64) {
	for i, v := range x {
		acc[i%lanes] += float64(v)
	}
}

// sqDevLanesGo adds d*d, d = float64(x[i]) - mean, to acc[i mod lanes].
func sqDevLanesGo(x []float32, mean float64, acc *[lanes]float64) {
	for i, v := range x {
		d := float64(v) - mean
		acc[i%lanes] += float64(d * d)
	}
}

func normalizeGo(out, x, gamma, beta []float32, mean, rstd float32) {
	out, gamma, beta = out[:len(x)], gamma[:len(x)], beta[:len(x)]
	for i, v := range x {
		out[i] = float32(float32((v-mean)*rstd)*gamma[i]) + beta[i]
	}
}

// lnGradSumsGo is LayerNormGradSums on the partial sums acc[0:lanes] (sg)
// and acc[lanes:] (sgx).
func lnGradSumsGo(x, dy, gamma []float32, mean, rstd float64, dGamma, dBeta []float64, acc *[2 * lanes]float64) {
	dy, gamma, dGamma, dBeta = dy[:len(x)], gamma[:len(x)], dGamma[:len(x)], dBeta[:len(x)]
	for i, v := range x {
		xh := float64((float64(v) - mean) * rstd)
		g := float64(dy[i])
		dGamma[i] += float64(g * xh)
		dBeta[i] += g
		gg := float64(g * float64(gamma[i]))
		acc[i%lanes] += gg
		acc[lanes+i%lanes] += float64(gg * xh)
	}
}

func lnGradXGo(dx, x, dy, gamma []float32, mean, rstd, mg, mgx float64) {
	dx, dy, gamma = dx[:len(x)], dy[:len(x)], gamma[:len(x)]
	for i, v := range x {
		xh := float64((float64(v) - mean) * rstd)
		t := float64(float64(dy[i])*float64(gamma[i])) - mg
		dx[i] = float32(rstd * (t - float64(xh*mgx)))
	}
}

func adamWGo(w, g, m, v []float32, k *adamWK) {
	g, m, v = g[:len(w)], m[:len(w)], v[:len(w)]
	for i := range w {
		gi := g[i]
		mi := float32(k.b1*m[i]) + float32(k.c1*gi)
		vi := float32(k.b2*v[i]) + float32(float32(k.c2*gi)*gi)
		m[i], v[i] = mi, vi
		denom := float32(float32(math.Sqrt(float64(vi)))*k.invSqrtBC2) + k.eps
		w[i] = float32(w[i]*k.shrink) - float32(k.step*mi)/denom
	}
}

// softmaxGradGo is SoftmaxGrad's portable code: IEEE float32 arithmetic
// with every input and result flushed as MXCSR's two bits do.
func softmaxGradGo(p, dp []float32, d float32) {
	dp = dp[:len(p)]
	d = flushSubnormal(d)
	for i, v := range p {
		p[i] = flushSubnormal(flushSubnormal(v) * flushSubnormal(flushSubnormal(dp[i])-d))
	}
}

// flushSubnormal returns x, or a zero of x's sign when x is subnormal.
func flushSubnormal(x float32) float32 {
	b := math.Float32bits(x)
	if b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return x
}

func dot4Go[T ~float32 | ~float64](a, b []T) T {
	b = b[:len(a)]
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

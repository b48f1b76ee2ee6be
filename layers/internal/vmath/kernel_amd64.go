//go:build amd64 && !purego

package vmath

// AVX2 kernels (kernel_amd64.s). Unless stated otherwise they process n
// elements, n a positive multiple of 8, 8 at a time.

// expAVX2 sets dst[i] = e^x[i] for i < n.
//
//go:noescape
func expAVX2(dst, x *float32, n int)

// expSubSumAVX2 sets x[i] = e^(x[i]-shift) for i < n and returns the sum of
// the results, accumulated in float64.
//
//go:noescape
func expSubSumAVX2(x *float32, n int, shift float32) float64

// addMaxAVX2 sets x[i] += b[i] for i < n and returns the maximum of the
// updated x[:n].
//
//go:noescape
func addMaxAVX2(x, b *float32, n int) float32

// addAVX2 sets dst[i] = a[i] + b[i] for i < n, n a positive multiple of 8.
//
//go:noescape
func addAVX2(dst, a, b *float32, n int)

// maxAVX2 returns the maximum of x[:n].
//
//go:noescape
func maxAVX2(x *float32, n int) float32

// scaleAVX2 sets x[i] *= s for i < n.
//
//go:noescape
func scaleAVX2(x *float32, n int, s float32)

// geluAVX2 sets dst[i] = GELU(x[i]) for i < n.
//
//go:noescape
func geluAVX2(dst, x *float32, n int)

// geluGradAVX2 sets dst[i] = dy[i]·GELU'(x[i]) for i < n.
//
//go:noescape
func geluGradAVX2(dst, x, dy *float32, n int)

// sumLanesAVX2 adds float64(x[i]) to acc[i mod 16] for i < n, n a positive
// multiple of 16 (accumulators Y0-Y3, 4 lanes each).
//
//go:noescape
func sumLanesAVX2(x *float32, n int, acc *[lanes]float64)

// sqDevLanesAVX2 adds d*d, d = float64(x[i]) - mean, to acc[i mod 16] for
// i < n, n a positive multiple of 16.
//
//go:noescape
func sqDevLanesAVX2(x *float32, n int, mean float64, acc *[lanes]float64)

// normalizeAVX2 sets out[i] = (x[i]-mean)*rstd*gamma[i] + beta[i] for i < n
// (see Normalize).
//
//go:noescape
func normalizeAVX2(out, x, gamma, beta *float32, n int, mean, rstd float32)

// lnGradSumsAVX2 is the first LayerNorm backward pass (see
// LayerNormGradSums) for i < n, n a positive multiple of 16, on the partial
// sums acc[0:16] (sg) and acc[16:32] (sgx).
//
//go:noescape
func lnGradSumsAVX2(x, dy, gamma *float32, n int, mean, rstd float64, dGamma, dBeta *float64, acc *[2 * lanes]float64)

// lnGradXAVX2 is the second LayerNorm backward pass (see LayerNormGradX)
// for i < n.
//
//go:noescape
func lnGradXAVX2(dx, x, dy, gamma *float32, n int, mean, rstd, mg, mgx float64)

// adamWAVX2 is AdamW for i < n with the constants k.
//
//go:noescape
func adamWAVX2(w, grad, m, v *float32, n int, k *adamWK)

// AVX-512 kernels (kernel512_amd64.s), 16 elements at a time. The exp-based
// ones take n a positive multiple of 8 and give the AVX2 results bit for
// bit; the others take any n > 0 and handle the last n mod 16 elements with
// masked loads and stores, which touch no memory past x[n-1].

// expAVX512 is expAVX2 on 16 lanes.
//
//go:noescape
func expAVX512(dst, x *float32, n int)

// expSubSumAVX512 is expSubSumAVX2 on 16 lanes; the sum is formed in the
// same order.
//
//go:noescape
func expSubSumAVX512(x *float32, n int, shift float32) float64

// expAddSubAVX512 is expSubAVX512 on x + b, the bias b added to the first
// nb elements (nb <= n) and rounded before the shift is taken.
//
//go:noescape
func expAddSubAVX512(x, b *float32, nb, n int, shift float32)

// expSubAVX512 is expSubSumAVX512 without the sum.
//
//go:noescape
func expSubAVX512(x *float32, n int, shift float32)

// addMaxAVX512 sets x[i] += b[i] for i < n and returns the maximum of the
// updated x[:n].
//
//go:noescape
func addMaxAVX512(x, b *float32, n int) float32

// addAVX512 sets dst[i] = a[i] + b[i] for i < n, n > 0.
//
//go:noescape
func addAVX512(dst, a, b *float32, n int)

// maxAVX512 returns the maximum of x[:n].
//
//go:noescape
func maxAVX512(x *float32, n int) float32

// scaleAVX512 sets x[i] *= s for i < n.
//
//go:noescape
func scaleAVX512(x *float32, n int, s float32)

// geluAVX512 is geluAVX2 on 16 lanes.
//
//go:noescape
func geluAVX512(dst, x *float32, n int)

// geluGradAVX512 is geluGradAVX2 on 16 lanes.
//
//go:noescape
func geluGradAVX512(dst, x, dy *float32, n int)

// geluBothAVX512 is geluBothAVX2 on 16 lanes.
//
//go:noescape
func geluBothAVX512(h, d, x *float32, n int)

// mulAVX512 sets dst[i] = a[i]*b[i] for i < n, n > 0.
//
//go:noescape
func mulAVX512(dst, a, b *float32, n int)

// geluBothAVX2 sets h[i] = GELU(x[i]) as geluAVX2 and d[i] = GELU'(x[i])
// as geluGradAVX2 before its product with dy, for i < n, n a positive
// multiple of 8; d may be x.
//
//go:noescape
func geluBothAVX2(h, d, x *float32, n int)

// mulAVX2 sets dst[i] = a[i]*b[i] for i < n, n a positive multiple of 8.
//
//go:noescape
func mulAVX2(dst, a, b *float32, n int)

// sumLanesAVX512 is sumLanesAVX2 with the accumulators in Z0-Z1 (8 lanes
// each); n is a positive multiple of 16.
//
//go:noescape
func sumLanesAVX512(x *float32, n int, acc *[lanes]float64)

// sqDevLanesAVX512 is sqDevLanesAVX2 on Z registers; n is a positive
// multiple of 16.
//
//go:noescape
func sqDevLanesAVX512(x *float32, n int, mean float64, acc *[lanes]float64)

// normalizeAVX512 is normalizeAVX2 for any n > 0.
//
//go:noescape
func normalizeAVX512(out, x, gamma, beta *float32, n int, mean, rstd float32)

// lnGradSumsAVX512 is lnGradSumsAVX2 on Z registers; n is a positive
// multiple of 16.
//
//go:noescape
func lnGradSumsAVX512(x, dy, gamma *float32, n int, mean, rstd float64, dGamma, dBeta *float64, acc *[2 * lanes]float64)

// lnRowsAVX512 is LayerNormRows for rows > 0 rows of d elements, d a
// positive multiple of 16 (stats nil: not stored).
//
//go:noescape
func lnRowsAVX512(out, x, gamma, beta *float32, rows, d int, eps float64, stats *float64)

// lnGradRowsAVX512 is LayerNormGradRows for rows > 0 rows of d elements, d
// a positive multiple of 16 and at most lnGradRowsMaxD: both passes of
// every row in one call.
//
//go:noescape
func lnGradRowsAVX512(dx, x, dy, gamma *float32, rows, d int, stats, dGamma, dBeta *float64)

// lnGradXAVX512 is lnGradXAVX2 for any n > 0.
//
//go:noescape
func lnGradXAVX512(dx, x, dy, gamma *float32, n int, mean, rstd, mg, mgx float64)

// adamWAVX512 is adamWAVX2 for any n > 0.
//
//go:noescape
func adamWAVX512(w, grad, m, v *float32, n int, k *adamWK)

// softmaxGradAVX512 sets p[i] = p[i]*(dp[i]-d) for i < n, flushing
// subnormal numbers (see SoftmaxGrad).
//
//go:noescape
func softmaxGradAVX512(p, dp *float32, n int, d float32)

// softmaxGradAVX2 is softmaxGradAVX512 on 8 lanes, n a positive multiple
// of 8.
//
//go:noescape
func softmaxGradAVX2(p, dp *float32, n int, d float32)

// logAVX512 sets dst[i] = log(x[i]) for i < n (n > 0 a multiple of 8) with
// the operations of math.Log on amd64, 8 float64 lanes at a time
// (log_amd64.s); lanes whose x is not positive, normal and finite are
// unspecified.
//
//go:noescape
func logAVX512(dst, x *float64, n int)

// dot4AVX returns Dot4(a[:n], b[:n]) for n > 0, with 128-bit AVX
// instructions (both assembly paths).
//
//go:noescape
func dot4AVX(a, b *float32, n int) float32

// dot4RowsAVX sets d[r] = dot4AVX(a + r*lda, b + r*ldb, n) for r < rows,
// rows and n positive multiples of 4 (strides in elements).
//
//go:noescape
func dot4RowsAVX(d, a *float32, lda int, b *float32, ldb, rows, n int)

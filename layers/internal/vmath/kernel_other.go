//go:build !amd64 || purego

package vmath

const noAsm = "vmath: assembly kernels not available"

// expAVX2 is never called on builds without the assembly kernels.
func expAVX2(dst, x *float32, n int) { panic(noAsm) }

// expSubSumAVX2 is never called on builds without the assembly kernels.
func expSubSumAVX2(x *float32, n int, shift float32) float64 { panic(noAsm) }

// addMaxAVX2 is never called on builds without the assembly kernels.
func addMaxAVX2(x, b *float32, n int) float32 { panic(noAsm) }

// maxAVX2 is never called on builds without the assembly kernels.
func maxAVX2(x *float32, n int) float32 { panic(noAsm) }

// addAVX2 is never called on builds without the assembly kernels.
func addAVX2(dst, a, b *float32, n int) { panic(noAsm) }

// scaleAVX2 is never called on builds without the assembly kernels.
func scaleAVX2(x *float32, n int, s float32) { panic(noAsm) }

// geluAVX2 is never called on builds without the assembly kernels.
func geluAVX2(dst, x *float32, n int) { panic(noAsm) }

// geluGradAVX2 is never called on builds without the assembly kernels.
func geluGradAVX2(dst, x, dy *float32, n int) { panic(noAsm) }

// sumLanesAVX2 is never called on builds without the assembly kernels.
func sumLanesAVX2(x *float32, n int, acc *[lanes]float64) { panic(noAsm) }

// sqDevLanesAVX2 is never called on builds without the assembly kernels.
func sqDevLanesAVX2(x *float32, n int, mean float64, acc *[lanes]float64) { panic(noAsm) }

// normalizeAVX2 is never called on builds without the assembly kernels.
func normalizeAVX2(out, x, gamma, beta *float32, n int, mean, rstd float32) { panic(noAsm) }

// lnGradSumsAVX2 is never called on builds without the assembly kernels.
func lnGradSumsAVX2(x, dy, gamma *float32, n int, mean, rstd float64, dGamma, dBeta *float64, acc *[2 * lanes]float64) {
	panic(noAsm)
}

// lnGradXAVX2 is never called on builds without the assembly kernels.
func lnGradXAVX2(dx, x, dy, gamma *float32, n int, mean, rstd, mg, mgx float64) { panic(noAsm) }

// adamWAVX2 is never called on builds without the assembly kernels.
func adamWAVX2(w, grad, m, v *float32, n int, k *adamWK) { panic(noAsm) }

// expAVX512 is never called on builds without the assembly kernels.
func expAVX512(dst, x *float32, n int) { panic(noAsm) }

// expSubSumAVX512 is never called on builds without the assembly kernels.
func expSubSumAVX512(x *float32, n int, shift float32) float64 { panic(noAsm) }

// expAddSubAVX512 is never called on builds without the assembly kernels.
func expAddSubAVX512(x, b *float32, nb, n int, shift float32) { panic(noAsm) }

// expSubAVX512 is never called on builds without the assembly kernels.
func expSubAVX512(x *float32, n int, shift float32) { panic(noAsm) }

// addMaxAVX512 is never called on builds without the assembly kernels.
func addMaxAVX512(x, b *float32, n int) float32 { panic(noAsm) }

// maxAVX512 is never called on builds without the assembly kernels.
func maxAVX512(x *float32, n int) float32 { panic(noAsm) }

// addAVX512 is never called on builds without the assembly kernels.
func addAVX512(dst, a, b *float32, n int) { panic(noAsm) }

// scaleAVX512 is never called on builds without the assembly kernels.
func scaleAVX512(x *float32, n int, s float32) { panic(noAsm) }

// geluAVX512 is never called on builds without the assembly kernels.
func geluAVX512(dst, x *float32, n int) { panic(noAsm) }

// geluGradAVX512 is never called on builds without the assembly kernels.
func geluGradAVX512(dst, x, dy *float32, n int) { panic(noAsm) }

// sumLanesAVX512 is never called on builds without the assembly kernels.
func sumLanesAVX512(x *float32, n int, acc *[lanes]float64) { panic(noAsm) }

// sqDevLanesAVX512 is never called on builds without the assembly kernels.
func sqDevLanesAVX512(x *float32, n int, mean float64, acc *[lanes]float64) { panic(noAsm) }

// normalizeAVX512 is never called on builds without the assembly kernels.
func normalizeAVX512(out, x, gamma, beta *float32, n int, mean, rstd float32) { panic(noAsm) }

// lnGradSumsAVX512 is never called on builds without the assembly kernels.
func lnGradSumsAVX512(x, dy, gamma *float32, n int, mean, rstd float64, dGamma, dBeta *float64, acc *[2 * lanes]float64) {
	panic(noAsm)
}

// lnRowsAVX512 is never called on builds without the assembly kernels.
func lnRowsAVX512(out, x, gamma, beta *float32, rows, d int, eps float64, stats *float64) {
	panic(noAsm)
}

// lnGradRowsAVX512 is never called on builds without the assembly kernels.
func lnGradRowsAVX512(dx, x, dy, gamma *float32, rows, d int, stats, dGamma, dBeta *float64) {
	panic(noAsm)
}

// lnGradXAVX512 is never called on builds without the assembly kernels.
func lnGradXAVX512(dx, x, dy, gamma *float32, n int, mean, rstd, mg, mgx float64) { panic(noAsm) }

// adamWAVX512 is never called on builds without the assembly kernels.
func adamWAVX512(w, grad, m, v *float32, n int, k *adamWK) { panic(noAsm) }

// softmaxGradAVX512 is never called on builds without the assembly kernels.
func softmaxGradAVX512(p, dp *float32, n int, d float32) { panic(noAsm) }

// softmaxGradAVX2 is never called on builds without the assembly kernels.
func softmaxGradAVX2(p, dp *float32, n int, d float32) { panic(noAsm) }

// logAVX512 is never called on builds without the assembly kernels.
func logAVX512(dst, x *float64, n int) { panic(noAsm) }

// geluBothAVX512 is never called on builds without the assembly kernels.
func geluBothAVX512(h, d, x *float32, n int) { panic(noAsm) }

// mulAVX512 is never called on builds without the assembly kernels.
func mulAVX512(dst, a, b *float32, n int) { panic(noAsm) }

// geluBothAVX2 is never called on builds without the assembly kernels.
func geluBothAVX2(h, d, x *float32, n int) { panic(noAsm) }

// mulAVX2 is never called on builds without the assembly kernels.
func mulAVX2(dst, a, b *float32, n int) { panic(noAsm) }

// dot4AVX is never called on builds without the assembly kernels.
func dot4AVX(a, b *float32, n int) float32 { panic(noAsm) }

// dot4RowsAVX is never called on builds without the assembly kernels.
func dot4RowsAVX(d, a *float32, lda int, b *float32, ldb, rows, n int) { panic(noAsm) }

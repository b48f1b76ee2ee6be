//go:build !amd64 || purego

package bf16

// path is portable: there is no assembly on this build.
var path = portable

// products is portable too (tests set it).
var products = portable

// productsPath is the products' kernel: products.
func productsPath() kpath { return products }

func kernel(_ kpath, nsl, kp int, a, b []uint32, af []float32, c []float32, ldc int, alpha, beta float32, bias []float32, rows, cols int) {
	kernelGo(nsl, kp, a, b, c, ldc, alpha, beta, bias, rows, cols)
}

// split is splitGo (only the emulated path splits, and this build has none).
func split(dst []float32, src []uint32, width int) { splitGo(dst, src, width) }

// RoundSlice sets dst[i] = Round(src[i]) for every i < len(src); dst must be
// at least as long.
func RoundSlice(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = Round(x)
	}
}

// pairs reports false: without assembly, packAcross packs every group
// itself.
func pairs(dst []uint32, lo, hi []float32, groups, width, stride int) bool { return false }

// along reports false: without assembly, packAlong packs every word
// itself.
func along(dst []uint32, src []float32, ld, chunks, ldd int) bool { return false }

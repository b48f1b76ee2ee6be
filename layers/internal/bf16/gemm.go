package bf16

import (
	"math"
	"sync"

	"github.com/alibi-go/alibi/layers/internal/gemm"
	"github.com/alibi-go/alibi/layers/parallel"
)

// The register tile of the kernels: MR rows of C by NR columns.
const (
	MR = 8
	NR = 32
	mc = 144 // rows of A packed at a time: 18 slivers of KC/2 pairs, 72 KiB
)

// kpath is a way to run the package's arithmetic: the conversions (the
// packing and RoundSlice, see path) and the products' kernel (see
// productsPath) each run on one. The first four give the same bits; amx,
// a kernel only, gives the tile unit's (see the package comment's Tiles).
type kpath int

const (
	portable kpath = iota // kernelGo and Round in Go
	avx2                  // the instructions' arithmetic on AVX2 with FMA (avx2_amd64.s)
	emulated              // the instructions' arithmetic on AVX-512F (emulated_amd64.s)
	native                // AVX512_BF16's VDPBF16PS and VCVTNEPS2BF16 (kernel_amd64.s)
	amx                   // AMX's TDPBF16PS (amx_amd64.s, tilegemm.go): products only, its own arithmetic
)

func (p kpath) String() string {
	switch p {
	case amx:
		return "amx"
	case native:
		return "avx512_bf16"
	case emulated:
		return "avx512f"
	case avx2:
		return "avx2"
	}
	return "portable"
}

// splitsA reports whether kernel p reads the A slivers split into floats
// (split): the emulations do, so as to broadcast each step's float.
func (p kpath) splitsA() bool { return p == emulated || p == avx2 }

// Path names the way Gemm runs on this CPU and build: "amx" (the products
// on AMX's tiles, the conversions on AVX512_BF16: a CPU and kernel that
// grant the tiles, unless ALIBI_SIMD names a path without them),
// "avx512_bf16" (the
// AVX512_BF16 instructions, or ALIBI_SIMD=avx512 on a CPU with AMX),
// "avx512f" (their arithmetic on AVX-512F, for a CPU without them),
// "avx2" (the same arithmetic on AVX2, for a CPU without AVX-512, or when
// ALIBI_SIMD=avx2 asks for it), "portable" (Go, many times slower: no
// AVX2, the purego build tag, or ALIBI_SIMD=portable), or "avx512f,
// avx512_bf16 conversions" on a CPU that has the instructions but runs
// VDPBF16PS slower than its emulation (see productsPath): the kernel's
// path first. All but "amx" give the same bits; "amx" gives the tile
// unit's (see the package comment).
func Path() string {
	p := productsPath()
	if p == path || p == amx {
		return p.String()
	}
	return p.String() + ", " + path.String() + " conversions"
}

// minParallelFlops is the smallest 2*m*n*k that Gemm splits across
// goroutines (a variable so that tests reach the parallel path).
var minParallelFlops = float64(1 << 22)

// Gemm computes C = alpha*Round(op(A))*Round(op(B)) + beta*C in the
// arithmetic the package comment describes, for row-major matrices: op(A)
// is m x k (stored k x m when transA), op(B) is k x n (stored n x k when
// transB), C is m x n, with row strides lda, ldb and ldc as in row-major
// CBLAS. Elements of C outside the m x n window are not touched. It uses up
// to threads goroutines, each on its own rows of C, and gives the same bits
// whatever the number. It panics if a dimension is negative or a slice is
// too short for its matrix.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, threads int) {
	product(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, nil, c, ldc, threads, nil)
}

// GemmThen is Gemm followed by then (nil for none) on each chunk of rows of
// C, all n columns, as soon as the chunk is finished, by the goroutine that
// computed it, while the chunk is in that core's cache: then(i0, i1, 0, n)
// for disjoint row ranges that cover the m rows, possibly concurrently.
// (An elementwise pass over a product's result, such as GELU, then runs on
// every core and reads the result from cache, instead of running on one
// core over the whole of C afterwards.)
func GemmThen(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, threads int, then gemm.Epilogue) {
	product(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, nil, c, ldc, threads, then)
}

// GemmBias computes C = alpha*Round(op(A))*Round(op(B)) + bias, bias (n
// elements) added to every row: a linear layer's forward product. It gives
// the bits of copying bias into every row of C and calling Gemm with beta
// 1, without that pass over C: the kernel adds the bias as it stores the
// first k block. It panics as Gemm does, and if bias is shorter than n.
func GemmBias(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int, threads int) {
	GemmBiasThen(transA, transB, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc, threads, nil)
}

// GemmBiasThen is GemmBias with an epilogue, called as GemmThen calls it.
func GemmBiasThen(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int, threads int, then gemm.Epilogue) {
	_ = bias[:n]
	product(transA, transB, m, n, k, alpha, a, lda, b, ldb, 1, bias, c, ldc, threads, then)
}

// product is Gemm, and GemmBias when bias is not nil (beta is then 1);
// then (nil for none) gets each finished chunk of rows.
func product(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, bias, c []float32, ldc int, threads int, then gemm.Epilogue) {
	gemm.CheckArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		if bias != nil { // C = 0 + bias, as the copied rows with beta 1
			for i := range m {
				copy(c[i*ldc:i*ldc+n], bias)
			}
		} else {
			gemm.ScaleC(m, n, beta, c, ldc)
		}
		finish(then, 0, m, n)
		return
	}
	kern := productsPath()
	if kern == amx {
		tileGemm(tileStrip(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, bias, c, ldc, threads, then)
		return
	}
	if threads <= 1 || 2*float64(m)*float64(n)*float64(k) < minParallelFlops {
		bp := packB(transB, n, k, b, ldb, 1)
		defer words.put(bp)
		rowsOf(kern, transA, m, n, k, 0, m, alpha, a, lda, bp, beta, bias, c, ldc)
		finish(then, 0, m, n)
		return
	}
	bp := packB(transB, n, k, b, ldb, threads)
	defer words.put(bp)
	// The rows are cut into chunks of at least minChunkSlivers slivers,
	// about chunksPerThread per goroutine, handed out in shares
	// (parallel.Shares): each goroutine takes the chunks of its own run of
	// rows, then those left of the others', so that one that starts late
	// or runs slower does not leave the others waiting at the end with
	// half the rows still to do. Each element of C is computed the same
	// way whatever chunk it falls in.
	slivers := (m + MR - 1) / MR
	per := max(minChunkSlivers, (slivers+threads*chunksPerThread-1)/(threads*chunksPerThread))
	chunks := (slivers + per - 1) / per
	parallel.RunShares(min(threads, chunks), chunks, func(_, ch int) {
		lo, hi := ch*per*MR, min(m, (ch+1)*per*MR)
		rowsOf(kern, transA, m, n, k, lo, hi, alpha, a, lda, bp, beta, bias, c, ldc)
		finish(then, lo, hi, n)
	})
}

// finish calls then (if any) on rows lo..hi-1 of C, all n columns.
func finish(then gemm.Epilogue, lo, hi, n int) {
	if then != nil && lo < hi {
		then(lo, hi, 0, n)
	}
}

// The row chunks of a parallel product: about chunksPerThread for each
// goroutine, of at least minChunkSlivers slivers of MR rows.
const (
	chunksPerThread = 4
	minChunkSlivers = 8
)

// rowsOf computes rows [lo, hi) of C (lo a multiple of MR) from the packed
// op(B): for each block of mc rows and each k block, it packs that part of
// op(A) (and splits it into floats for the emulated kernels) and runs
// kernel kern down every column sliver. A bias (nil for none) is added in
// the first k block's stores, in place of beta*C.
func rowsOf(kern kpath, transA bool, m, n, k, lo, hi int, alpha float32, a []float32, lda int, bp []uint32, beta float32, bias, c []float32, ldc int) {
	ap := words.get(mc * KC / 2)
	defer words.put(ap)
	var af []float32
	if kern.splitsA() {
		af = floats.get(mc * KC)
		defer floats.put(af)
	}
	kBlocks := (k + KC - 1) / KC
	nSlivers := (n + NR - 1) / NR
	for i0 := lo; i0 < hi; i0 += mc {
		rows := min(mc, hi-i0)
		nsl := (rows + MR - 1) / MR
		for kb := range kBlocks {
			k0 := kb * KC
			kp := (min(KC, k-k0) + 1) / 2 // pairs in this block
			packA(transA, i0, rows, k0, kp, k, a, lda, ap)
			if af != nil {
				split(af, ap[:nsl*kp*MR], MR)
			}
			bt, bs := beta, bias
			if kb > 0 {
				bt, bs = 1, nil
			}
			// The block's B slivers: kBlocks blocks of nSlivers slivers of
			// (pairs in the block) x NR words.
			base := k0 / 2 * nSlivers * NR
			for s := range nSlivers {
				j0 := s * NR
				var sb []float32
				if bs != nil {
					sb = bs[j0:]
				}
				kernel(kern, nsl, kp, ap, bp[base+s*kp*NR:], af, c[i0*ldc+j0:], ldc, alpha, bt, sb, rows-(nsl-1)*MR, min(NR, n-j0))
			}
		}
	}
}

// packA packs rows [i0, i0+rows) of op(A) at k steps [k0, k0+2kp) into
// slivers of MR rows: word (s, p, i) = pair of row s*MR+i at steps k0+2p
// and k0+2p+1, zero past the matrix.
func packA(transA bool, i0, rows, k0, kp, k int, a []float32, lda int, dst []uint32) {
	nsl := (rows + MR - 1) / MR
	if transA { // A(i, p) = a[p*lda + i]: the pairs are two rows of a
		packAcross(dst, a, lda, i0, rows, nsl, MR, k0, kp, k)
		return
	}
	packAlong(dst, a, lda, i0, rows, nsl, MR, k0, kp, k)
}

// packB packs all of op(B): for each k block and each sliver of NR
// columns, word (p, j) = pair of column j at the block's steps 2p and
// 2p+1, zero past the matrix. With threads > 1, the slivers of each block
// are shared out among that many goroutines.
func packB(transB bool, n, k int, b []float32, ldb int, threads int) []uint32 {
	nSlivers := (n + NR - 1) / NR
	dst := words.get((k + 1) / 2 * nSlivers * NR)
	pack := func(k0, s0, s1 int) {
		kp := (min(KC, k-k0) + 1) / 2
		block := dst[k0/2*nSlivers*NR+s0*kp*NR:]
		lines := min(n, s1*NR) - s0*NR
		if transB { // B(p, j) = b[j*ldb + p]: a column's steps are contiguous
			packAlong(block, b, ldb, s0*NR, lines, s1-s0, NR, k0, kp, k)
		} else {
			packAcross(block, b, ldb, s0*NR, lines, s1-s0, NR, k0, kp, k)
		}
	}
	type part struct{ k0, s0, s1 int }
	var parts []part
	per := max(1, nSlivers/max(1, threads))
	for k0 := 0; k0 < k; k0 += KC {
		for s0 := 0; s0 < nSlivers; s0 += per {
			parts = append(parts, part{k0, s0, min(nSlivers, s0+per)})
		}
	}
	threads = min(threads, len(parts))
	if threads <= 1 {
		for _, p := range parts {
			pack(p.k0, p.s0, p.s1)
		}
		return dst
	}
	parallel.Run(threads, func(t int) {
		for i := t; i < len(parts); i += threads {
			pack(parts[i].k0, parts[i].s0, parts[i].s1)
		}
	})
	return dst
}

// packAlong packs lines r0.. r0+lines-1 of src whose k steps are contiguous
// (element (r, p) at src[(r0+r)*ld + p]) into slivers of width lines:
// dst[s*kp*width + q*width + r%width] is the pair of line s*width+r%width at
// steps k0+2q and k0+2q+1. Where the assembly path has it, each group of 8
// lines inside the matrix is converted and transposed 16 steps at a time
// (along); the words left (the block's last steps, padding, lines past the
// matrix) are converted a line at a time (RoundSlice), two consecutive
// halves of a line making a pair's word.
func packAlong(dst []uint32, src []float32, ld, r0, lines, slivers, width, k0, kp, k int) {
	kk := min(2*kp, k-k0)
	chunks := kk / 16
	conv := converted.get(width * 2 * kp)
	defer converted.put(conv)
	for s := range slivers {
		out := dst[s*kp*width : (s+1)*kp*width]
		done := 0 // lines whose first 8*chunks words along packed
		for g := 0; g+8 <= width && s*width+g+8 <= lines; g += 8 {
			if !along(out[g:], src[(r0+s*width+g)*ld+k0:], ld, chunks, width) {
				break
			}
			done = g + 8
		}
		for i := range width {
			q0 := 0
			if i < done {
				q0 = 8 * chunks
			}
			if q0 == kp {
				continue
			}
			row := conv[i*2*kp : (i+1)*2*kp]
			if r := s*width + i; r < lines {
				if from := 2 * q0; from < kk {
					RoundSlice(row[from:], src[(r0+r)*ld+k0+from:(r0+r)*ld+k0+kk])
				}
				clear(row[max(2*q0, kk):])
			} else {
				clear(row[2*q0:])
			}
			for q := q0; q < kp; q++ {
				out[q*width+i] = uint32(row[2*q]) | uint32(row[2*q+1])<<16
			}
		}
	}
}

// packAcross is packAlong for src whose k steps are its rows (element (r,
// p) at src[p*ld + r0 + r]): each pair of rows is converted and
// interleaved.
func packAcross(dst []uint32, src []float32, ld, r0, lines, slivers, width, k0, kp, k int) {
	n := slivers * width
	lo, hi := converted.get(n), converted.get(n)
	defer converted.put(lo)
	defer converted.put(hi)
	full := lines / width // slivers with every line in the matrix
	for q := range kp {
		p := k0 + 2*q
		// Both steps in the matrix: the full slivers in one pass (pairs),
		// where the assembly path has it.
		s0 := 0
		if p+1 < k && full > 0 && pairs(dst[q*width:], src[p*ld+r0:], src[(p+1)*ld+r0:], full, width, kp*width) {
			s0 = full
		}
		if s0 == slivers {
			continue
		}
		from := s0 * width
		for h, half := range [2][]uint16{lo, hi} {
			if p+h < k {
				RoundSlice(half[from:], src[(p+h)*ld+r0+from:(p+h)*ld+r0+lines])
				clear(half[lines:])
			} else {
				clear(half[from:])
			}
		}
		for s := s0; s < slivers; s++ {
			out := dst[s*kp*width+q*width : s*kp*width+q*width+width]
			l, h := lo[s*width:s*width+width], hi[s*width:s*width+width]
			for j := range out {
				out[j] = uint32(l[j]) | uint32(h[j])<<16
			}
		}
	}
}

// kernelGo is the portable kernel: nsl vertically adjacent MR x NR tiles of
// C from nsl packed A slivers of kp pairs and one packed B sliver, storing
// rows rows of the last tile and cols columns. With a bias (cols elements,
// nil for none), C = alpha*acc + bias and beta is not used.
func kernelGo(nsl, kp int, a, b []uint32, c []float32, ldc int, alpha, beta float32, bias []float32, rows, cols int) {
	var acc [MR][NR]float32
	for s := range nsl {
		acc = [MR][NR]float32{}
		as := a[s*kp*MR:]
		for p := range kp {
			bw := b[p*NR : p*NR+NR]
			for i := range MR {
				aw := as[p*MR+i]
				for j, w := range bw {
					acc[i][j] = dot2(acc[i][j], w, aw)
				}
			}
		}
		n := MR
		if s == nsl-1 {
			n = rows
		}
		for i := range n {
			row := c[(s*MR+i)*ldc : (s*MR+i)*ldc+cols]
			for j := range row {
				t := float32(alpha * acc[i][j])
				if bias != nil {
					row[j] = t + bias[j]
				} else if beta == 0 {
					row[j] = t
				} else {
					row[j] = t + float32(beta*row[j])
				}
			}
		}
	}
}

// slices recycles the buffers of one element type: packed words, or
// converted lines.
type slices[T any] struct{ p sync.Pool }

// get returns a slice of n elements, recycled when one is big enough; its
// contents are stale.
func (s *slices[T]) get(n int) []T {
	if p, ok := s.p.Get().(*[]T); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]T, n)
}

// put gives b back.
func (s *slices[T]) put(b []T) { s.p.Put(&b) }

var (
	words     slices[uint32]  // packed A and B
	converted slices[uint16]  // lines converted to bfloat16
	floats    slices[float32] // packed words split into floats (emulated kernels)
)

// splitGo is splitAsm in Go: for each group of width words of src, the
// words' top halves as floats (the odd k steps), then their bottom halves
// (the even steps).
func splitGo(dst []float32, src []uint32, width int) {
	for g := 0; g+width <= len(src); g += width {
		out := dst[2*g : 2*g+2*width]
		for j, w := range src[g : g+width] {
			out[j] = math.Float32frombits(w &^ 0xffff)
			out[width+j] = math.Float32frombits(w << 16)
		}
	}
}

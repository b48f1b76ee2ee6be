package flash

import (
	"unsafe"

	"github.com/alibi-go/alibi/layers/parallel"
)

// Opts tunes a kernel call. Zero values choose automatically.
type Opts struct {
	// BlockQ and BlockK override the query and key tile sizes (see
	// Tiles); tests use them to cross many tile boundaries at small
	// lengths.
	BlockQ, BlockK int
	// Scratch, when not nil, keeps the per-worker buffers between calls
	// (*Scratch holds the package's buffers for the element type); nil
	// allocates them per call. Calls sharing a Scratch must not run
	// concurrently.
	Scratch *any
	// Stats, when not nil, makes Forward add the statistics of its
	// attention rows to it (see Stats).
	Stats *Stats
	// WholeBlocks makes both passes compute every block of query rows
	// that crosses the diagonal whole, with its upper triangle, instead of
	// in bands (see band): the same results, bit for bit, more work.
	// Tests compare the two.
	WholeBlocks bool
}

// Tile sizes, chosen by measurement on a 2-core Zen 3 (4 heads of 32,
// float32): forward and backward speed is flat for key tiles of 256 to 2048
// and query tiles of 64 to 128, and drops with smaller ones.
const (
	BlockQ       = 64   // query rows per tile
	BlockK       = 512  // keys per tile
	DecodeBlockK = 2048 // keys per tile when there are few queries
	DecodeRows   = 4    // "few queries": at most this many
)

// Tiles returns the query and key tile sizes for qLen queries against
// at most kLen keys. Up to BlockK keys fit in one key tile, so every
// row's softmax is computed at once as in the materialised kernel (no
// rescaling); a handful of queries (generation with a cache) take larger key
// tiles, since their score tiles are only a few rows high.
func Tiles(qLen, kLen int, opt Opts) (bq, bk int) {
	bq = BlockQ
	if opt.BlockQ > 0 {
		bq = opt.BlockQ
	}
	switch {
	case opt.BlockK > 0:
		bk = opt.BlockK
	case qLen <= DecodeRows:
		bk = DecodeBlockK
	default:
		bk = BlockK
	}
	return max(1, min(bq, qLen)), max(1, min(bk, kLen))
}

// buffers holds the per-worker buffers of the kernels, the accumulators
// of a learned bias's gradient and the statistics of each unit of work.
// Buffers grow as needed and are reused.
type buffers[T float] struct {
	work []*workerBuffers[T]
	accs [][]T
	// parts are the statistics of each unit of a Forward call with
	// Stats.
	parts []partial
}

// workerBuffers is one worker's scratch: score and probability-gradient tiles,
// the running row maxima and sums of the forward pass, and the row terms
// D_i = dO_i . O_i of the backward pass.
type workerBuffers[T float] struct {
	s, dp, m, d []T
	l, logs     []float64 // logs: the logarithms of l's rows
	// The forward pass's maxima and padded lengths of a band's rows (see
	// softmaxBand).
	rowMax []T
	rowLen []int
	// Forward with Stats: one row's scores and exponentials in float64
	// and the running sums of each row of a query tile.
	sc, ex []float64
	rs     []rowStats
	// The backward pass's keys and values of one key tile, transposed
	// once for all the query tiles that see them.
	kT, vT packedT[T]
	// The backward pass's contiguous copies of the keys of a key tile and
	// of the queries and output gradients of a query tile (see
	// contiguousRows), and the views its products read: kRows (row stride
	// ldKRows) for dQ = dS K.
	kc, qc, doc []T
	kRows       []T
	ldKRows     int
	// The forward pass's transposed key tiles of the head at hand, during
	// a call (see keyTiles).
	keys keyTiles[T]
}

// KeyTilesBytes bounds the transposed key tiles a worker keeps in the
// forward pass (1 MiB: the keys of 8192 positions of a 32-wide head in
// float32), so that its memory does not grow with the length; beyond it,
// one more tile's worth is packed again for each query tile.
const KeyTilesBytes = 1 << 20

// keyTiles holds the keys of one head, transposed a key tile at a time for
// all the query tiles that see them: kts[i] holds tile i with n[i] keys
// (0: not packed), for the head whose first key is at of. Only the tiles
// within KeyTilesBytes are kept; later ones are packed afresh (into once)
// for each query tile. Its storage serves head after head within a Forward
// call and is dropped at the end of it, so that neither the layers of a
// model nor the length of the last call leave any behind; a call that
// never packs (generation's few rows) allocates nothing.
type keyTiles[T float] struct {
	kts  []packedT[T]
	n    []int
	of   *T
	once packedT[T]
	// onceOf is the first key of the tile in once (the bands of a query
	// tile reuse it).
	onceOf *T
}

// tile returns the transposed keys of the key tile from key j0 (tiles of
// bk keys) of the head whose keys start at k (row stride ld), packed with
// at least the tile's first kn keys of kAll: the packing kept from an
// earlier query tile of the same head when it holds them, else a new one
// of all kAll keys (kept for the next query tiles when within
// KeyTilesBytes; else one of kn keys, kept only for the next bands of the
// same query tile).
func (kt *keyTiles[T]) tile(k []T, ld, j0, bk, kn, kAll, dh int) *packedT[T] {
	i := j0 / bk
	if (i+1)*bk*dh*int(unsafe.Sizeof(k[0])) > KeyTilesBytes {
		if p := &k[j0*ld]; p != kt.onceOf || kt.once.n < kn {
			kt.once.reserve(dh, bk) // the bands of a diagonal tile pack more keys each
			kt.once.pack(dh, kn, k[j0*ld:], ld)
			kt.onceOf = p
		}
		return &kt.once
	}
	if p := &k[0]; p != kt.of {
		clear(kt.n)
		kt.of = p
	}
	for len(kt.kts) <= i {
		kt.kts = append(kt.kts, packedT[T]{})
		kt.n = append(kt.n, 0)
	}
	if kt.n[i] < kn {
		kt.kts[i].pack(dh, kAll, k[j0*ld:], ld)
		kt.n[i] = kAll
	}
	return &kt.kts[i]
}

// scratchFrom returns the scratch kept in *scratch (or a new one when
// scratch is nil), with one workerBuffers per worker.
func scratchFrom[T float](scratch *any) *buffers[T] {
	var fs *buffers[T]
	if scratch != nil {
		fs, _ = (*scratch).(*buffers[T])
	}
	if fs == nil {
		fs = &buffers[T]{}
		if scratch != nil {
			*scratch = fs
		}
	}
	if w := parallel.Workers(); len(fs.work) != w {
		fs.work = make([]*workerBuffers[T], w)
		for i := range fs.work {
			fs.work[i] = &workerBuffers[T]{}
		}
	}
	return fs
}

// resize returns s with length n, reusing its storage when large enough.
func resize[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// MaxKLen returns the largest number of keys of any sequence.
func MaxKLen[T float](seqs []Seq[T], qLen int) int {
	k := 0
	for _, s := range seqs {
		k = max(k, s.Offset+qLen)
	}
	return k
}

// scoreStride returns the row stride of the score tile of the forward pass
// and of the backward pass's probability and dP tiles, for key tiles of bk
// keys: bk, plus a cache line's 16 floats when bk is a multiple of 256. The
// backward pass's products dV = P^T dO and dK = dS^T Q read those tiles down
// their columns, 8 keys of each of up to BlockQ rows; rows a multiple of 1
// KiB apart fall in at most 4 of the 64 sets of the L1 data cache (64 sets
// of 8 or 12 ways on Zen 4, Zen 5 and the Intel Xeon it was measured on; 2
// sets at 2 KiB, the small model's 512 keys), too few lines for 64 rows, so
// every 8 keys were read from L2 again. Measured on an Intel Xeon (family 6,
// model 207), backward pass alone, 31 alternating pairs: 512 keys (4 x 512
// tokens, 8 heads of 32) 1.037-1.047x faster, 1024 keys 1.024-1.050x; at 128
// keys (512 bytes apart, 8 sets) padding made no difference (0.996-1.012x).
// The forward pass's products write and read its score tile 8 rows at a time
// (S = Q K^T, then P V); the same padding made the forward pass alone 1.012x
// faster at 512 keys (16 x 512 tokens, 8 heads of 32; 114 of 150 calls
// faster, alternating call by call, same Xeon) and 1.011x at 1024 (4 x 1024
// tokens; 120 of 150). The arithmetic does not depend on the stride.
func scoreStride(bk int) int {
	if fewL1Sets(bk) {
		return bk + 16
	}
	return bk
}

// fewL1Sets reports whether rows ld elements apart are a multiple of 1 KiB
// apart in float32 (256 elements), so that a walk down a column of them
// stays in at most 4 of the L1 cache's 64 sets (see scoreStride).
func fewL1Sets(ld int) bool { return ld%256 == 0 }

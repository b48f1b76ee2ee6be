package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/alibi-go/alibi/layers/parallel"
)

// sharedPackBudget is the largest number of floats (packed A plus packed B)
// for which the multi-threaded path packs the whole of op(A) and op(B) once
// into shared buffers (2 MiB: the packed operands then stay cache-resident);
// operands read in place need no room. Larger products, typically those
// with a long k reduction, use the static split in gridSplit, whose
// per-goroutine blocked packing is more cache friendly. It is a variable so
// that tests can exercise both paths (-1 forces the static split).
var sharedPackBudget = 1 << 19

// sharedJob is one multi-threaded product. Its work is a list of packing
// tasks followed by a list of compute tasks (2-D chunks of C), both handed
// out through atomic counters (the compute tasks in shares, see comp), so
// that goroutines which start late (waking an idle core can take tens of
// microseconds) simply take fewer chunks.
type sharedJob struct {
	g              *geometry
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	a, b, c        []float32
	lda, ldb, ldc  int
	bias           []float32 // added in the first k block's stores in place of beta*C (AVX-512 only; nil for none)
	then           Epilogue  // called on each chunk of C after its last k block (nil for none)

	kc      int  // k block size; block q covers k steps [q*kc, min(k, (q+1)*kc))
	nkb     int  // number of k blocks
	mPad    int  // m rounded up to a multiple of mr
	nPad    int  // n rounded up to a multiple of nr
	direct  bool // A is read in place rather than packed
	directB bool // B is read in place rather than packed

	ap, bp []float32 // shared packed op(A) (unless direct) and op(B) (unless directB)

	// Packing tasks: B tasks are (k block, B sliver); A tasks are
	// (k block, group of packAGroup A slivers).
	bTasksPerBlock, aTasksPerBlock int
	packTotal                      int64
	packNext, packDone             atomic.Int64

	// Compute tasks: rowChunks x colChunks chunks of C, in row-major
	// order, handed out in shares (see parallel.Shares): each goroutine
	// computes its own run of rows first.
	rowChunk, colChunk   int // chunk height (multiple of mr) and width (multiple of nr)
	rowChunks, colChunks int
	compTotal            int64
	comp                 *parallel.Shares
	packed               chan struct{} // closed when packDone reaches packTotal
}

// packSpin is how many times a goroutine yields while waiting for packing
// to finish before it blocks.
const packSpin = 64

// packAGroup is the number of A slivers packed by one task.
const packAGroup = 8

var sharedPool = sync.Pool{New: func() any { return new(workspace) }}

// trySharedParallel runs the product on up to threads goroutines using
// shared packed buffers. It returns false, doing nothing, when the packed
// operands would exceed sharedPackBudget or k exceeds the geometry's
// sharedMaxK. A bias (nil for none; only on the AVX-512 path) is added to
// every row in the first k block's stores, in place of beta*C; then (nil
// for none) gets each chunk of C once it is finished.
func trySharedParallel(g *geometry, threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, bias, c []float32, ldc int, then Epilogue) bool {
	if g.sharedMaxK > 0 && k > g.sharedMaxK {
		return false
	}
	j := &sharedJob{
		g:      g,
		transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc, bias: bias, then: then,
	}
	j.kc = blockSize(k, g.kcMax, 1)
	j.nkb = ceilDiv(k, j.kc)
	j.mPad = ceilDiv(m, g.mr) * g.mr
	j.nPad = ceilDiv(n, g.nr) * g.nr
	j.direct = g.useDirectA(transA, lda, j.nPad, k)
	j.directB = g.useDirectB(transB, m, k)
	need := 0
	if !j.directB {
		need += j.nkb * j.kc * j.nPad
	}
	if !j.direct {
		need += j.nkb * j.kc * j.mPad
	}
	if need > sharedPackBudget {
		return false
	}

	// Chunks of C: row blocks sized for L2 reuse of the A block and of the
	// chunk of C (sharedRows); split columns as well when there are too few
	// row blocks to balance.
	rows := g.mcMax
	if g.sharedRows > 0 {
		rows = g.sharedRows
	}
	j.rowChunk = blockSize(m, rows, g.mr)
	j.rowChunks = ceilDiv(m, j.rowChunk)
	nTiles := j.nPad / g.nr
	j.colChunks = 1
	if want := 4 * threads; j.rowChunks < want {
		j.colChunks = min(nTiles, ceilDiv(want, j.rowChunks))
	}
	j.colChunk = ceilDiv(nTiles, j.colChunks) * g.nr
	j.colChunks = ceilDiv(n, j.colChunk)
	j.compTotal = int64(j.rowChunks * j.colChunks)

	if !j.directB {
		j.bTasksPerBlock = nTiles
	}
	if !j.direct {
		j.aTasksPerBlock = ceilDiv(j.mPad/g.mr, packAGroup)
	}
	j.packTotal = int64(j.nkb * (j.bTasksPerBlock + j.aTasksPerBlock))

	ws := sharedPool.Get().(*workspace)
	if !j.directB {
		ws.bp = grow(ws.bp, j.nkb*j.kc*j.nPad)
		j.bp = ws.bp
	}
	if !j.direct {
		ws.ap = grow(ws.ap, j.nkb*j.kc*j.mPad)
		j.ap = ws.ap
	}
	j.packed = make(chan struct{})

	workers := int(min(int64(threads), j.compTotal))
	j.comp = parallel.NewShares(workers, int(j.compTotal))
	parallel.Run(workers, j.work)
	j.ap, j.bp = nil, nil
	sharedPool.Put(ws)
	return true
}

// work is run by every participating goroutine, w being its number: it
// takes packing tasks, waits for all packing to finish, then takes compute
// chunks, its own share first, until none are left. A goroutine that finds
// no work touches nothing but the counters.
func (j *sharedJob) work(w int) {
	for {
		t := j.packNext.Add(1) - 1
		if t >= j.packTotal {
			break
		}
		j.pack(int(t))
		if j.packDone.Add(1) == j.packTotal {
			close(j.packed)
		}
	}
	t, ok := j.comp.Next(w)
	if !ok {
		return
	}
	// The remaining packing tasks are being finished by other goroutines.
	// Spin briefly, then block: spinning for long would steal CPU time
	// from the very goroutine being waited for when the machine is busy.
	for i := 0; j.packDone.Load() < j.packTotal; i++ {
		if i >= packSpin {
			<-j.packed
			break
		}
		runtime.Gosched()
	}
	ws := workspacePool.Get().(*workspace)
	defer workspacePool.Put(ws)
	ws.edge = grow(ws.edge, j.g.mr*j.kc)
	if j.directB {
		ws.edgeB = grow(ws.edgeB, j.g.nr*j.kc)
	}
	for ; ok; t, ok = j.comp.Next(w) {
		j.compute(t, ws.edge, ws.edgeB)
	}
}

// kBlock returns the start and size of k block q.
func (j *sharedJob) kBlock(q int) (pc, kb int) {
	pc = q * j.kc
	return pc, min(j.kc, j.k-pc)
}

// pack performs packing task t.
func (j *sharedJob) pack(t int) {
	g := j.g
	per := j.bTasksPerBlock + j.aTasksPerBlock
	q, r := t/per, t%per
	pc, kb := j.kBlock(q)
	if r < j.bTasksPerBlock {
		jc := r * g.nr
		off := q*j.kc*j.nPad + jc*kb
		g.packB(j.transB, kb, min(g.nr, j.n-jc), j.b, j.ldb, pc, jc, j.bp[off:off+g.nr*kb], nil, false)
		return
	}
	ic := (r - j.bTasksPerBlock) * packAGroup * g.mr
	mb := min(packAGroup*g.mr, j.m-ic)
	off := q*j.kc*j.mPad + ic*kb
	g.packA(j.transA, mb, kb, j.a, j.lda, ic, pc, j.ap[off:off+ceilDiv(mb, g.mr)*g.mr*kb])
}

// compute performs compute chunk t: all k blocks of one chunk of C, then
// the epilogue on it.
func (j *sharedJob) compute(t int, edge, edgeB []float32) {
	ri, ci := t/j.colChunks, t%j.colChunks
	ic, jc := ri*j.rowChunk, ci*j.colChunk
	mb, nb := min(j.rowChunk, j.m-ic), min(j.colChunk, j.n-jc)
	rs, cs := j.lda, 1
	if j.transA {
		rs, cs = 1, j.lda
	}
	for q := 0; q < j.nkb; q++ {
		pc, kb := j.kBlock(q)
		bet := j.beta
		if q > 0 {
			bet = 1
		}
		bsrc := bSource{b: j.b, base: pc*j.ldb + jc, ld: j.ldb}
		if !j.directB {
			boff := q*j.kc*j.nPad + jc*kb
			bsrc = bSource{b: j.bp[boff : boff+ceilDiv(nb, j.g.nr)*j.g.nr*kb], ld: j.g.nr, packed: true}
		}
		var src aSource
		if j.direct {
			src = aSource{a: j.a, base: ic*rs + pc*cs, rs: rs, cs: cs}
		} else {
			aoff := q*j.kc*j.mPad + ic*kb
			src = aSource{a: j.ap[aoff : aoff+ceilDiv(mb, j.g.mr)*j.g.mr*kb], rs: 1, cs: j.g.mr, packed: true}
		}
		var bias []float32 // the first k block's bias
		if q == 0 && j.bias != nil {
			bias = j.bias[jc : jc+nb]
		}
		j.g.macroKernel(mb, nb, kb, j.alpha, src, bsrc, bet, bias, j.c[ic*j.ldc+jc:], j.ldc, edge, edgeB)
	}
	finish(j.then, ic, ic+mb, jc, jc+nb)
}

package layers

import (
	"fmt"
	"sync/atomic"

	"github.com/alibi-go/alibi/layers/parallel"
	"gorgonia.org/tensor"
)

// lnAfter runs a LayerNorm's backward inside the product that computes the
// gradient of its output.
//
// Every LayerNorm of the model feeds one linear layer (the queries, keys and
// values; the MLP's first product; the output head), so the gradient of its
// output is that layer's dx = dy W^T and nothing else. As two ops, the
// product writes dx to memory, and the LayerNorm's backward reads it back
// (with the LayerNorm's input) and writes its own dx to a third array. Here
// the product's epilogue runs the LayerNorm's backward on each chunk of rows
// as soon as the product has finished all of its columns, while the chunk is
// still in the cache of the core that finished it, and writes the
// LayerNorm's dx over it; the LayerNorm's op then hands that array on as its
// output. The chunks and the arithmetic are those of lnBackward, so the bits
// are too.
//
// The LayerNorm's SymDiff sets it up when the gradient it receives is a
// linear layer's dx op. It runs only when both ops borrow their outputs from
// a graph's Buffers (the output arrays are swapped between the two ops; see
// take), on float32 (in fp32 and in bf16, whose product calls the epilogue
// on chunks of whole rows); otherwise the two ops run as two.
type lnAfter struct {
	lin *linearGradOp    // the product: the linear layer's dx
	ln  *layerNormGradOp // the LayerNorm's x gradient, which reads lin's output
	out *tensor.Dense    // lin's output after a fused run, until ln takes it
	xT  *tensor.Dense    // the LayerNorm's input in that run
	gT  *tensor.Dense    // its gamma
	x   []float32        // the LayerNorm's input, rows x d
	g   []float32        // gamma, d
	c   []float32        // lin's output: dy on the way in, the LayerNorm's dx on the way out
	d   int              // row length
	st  []float64        // the forward's statistics
	sum []float64        // the chunks' partial sums of dgamma and dbeta
	rem []atomic.Int64   // elements of each chunk the product has not finished
}

// start readies a fused run on c, the product's output (rows x d), and
// reports whether it can run: float32 on pooled outputs, with the
// LayerNorm's forward input, gamma and statistics of this run at hand.
func (f *lnAfter) start(c *tensor.Dense) bool {
	f.out = nil
	fwd := f.ln.fwd
	if f.lin.pool == nil || f.ln.pool == nil || c.Dtype() != tensor.Float32 || len(fwd.ins) < 2 {
		return false
	}
	rows, d := c.Shape()[0], c.Shape()[1]
	xT, gT := fwd.ins[0], fwd.ins[1]
	if xT.Dtype() != tensor.Float32 || !xT.Shape().Eq(c.Shape()) || gT.Shape().TotalSize() != d || len(fwd.stats) != 2*rows {
		return false
	}
	chunks := parallel.NumChunks(rows, lnChunk)
	f.xT, f.gT = xT, gT
	f.x, f.g, f.c, f.d, f.st = elems[float32](xT), elems[float32](gT), elems[float32](c), d, fwd.stats
	f.sum = resize(f.sum, 2*chunks*d)
	clear(f.sum)
	if len(f.rem) != chunks {
		f.rem = make([]atomic.Int64, chunks)
	}
	for i := range f.rem {
		lo, hi := parallel.ChunkBounds(rows, chunks, i)
		f.rem[i].Store(int64((hi - lo) * d))
	}
	return true
}

// then is the product's epilogue: it runs the LayerNorm's backward on every
// chunk of rows whose last elements are in the finished block. The block
// that finishes a chunk need not hold all of it: the rest of the chunk was
// finished earlier (the atomic count orders those writes before this read),
// and no other block's epilogue touches it again. A block that is the
// whole product (a path that finished everything at once) is done on every
// core.
func (f *lnAfter) then(i0, i1, j0, j1 int) {
	rows := len(f.x) / f.d
	if i0 == 0 && i1 == rows && j0 == 0 && j1 == f.d {
		parallelChunks(rows, lnChunk, f.chunk)
		return
	}
	for c := range f.rem {
		lo, hi := parallel.ChunkBounds(rows, len(f.rem), c)
		if a, b := max(lo, i0), min(hi, i1); a < b && f.rem[c].Add(-int64((b-a)*(j1-j0))) == 0 {
			f.chunk(c, lo, hi)
		}
	}
}

// chunk is the LayerNorm's backward on chunk c, rows lo..hi-1, in place.
func (f *lnAfter) chunk(c, lo, hi int) {
	lnGradChunk(f.x, f.g, f.c, f.c, f.d, f.st, f.sum, c, lo, hi)
}

// finish, after the product, sums dgamma and dbeta for the LayerNorm's
// gamma and beta gradient ops and keeps out for take.
func (f *lnAfter) finish(out *tensor.Dense) {
	fwd := f.ln.fwd
	if len(fwd.dGamma) != f.d {
		fwd.dGamma, fwd.dBeta = make([]float64, f.d), make([]float64, f.d)
	}
	lnGradSums(f.sum, f.d, fwd.dGamma, fwd.dBeta)
	f.out = out
}

// take is the LayerNorm op's side: if the product's last run was fused and
// ts are that run's x, gamma and the product's output, it swaps the two
// ops' output arrays (lin, whose output no op reads any more, gets the one
// the LayerNorm's op borrowed, of the same size) and returns the
// LayerNorm's dx. It returns nil when the product ran on its own.
func (f *lnAfter) take(ts []*tensor.Dense) (*tensor.Dense, error) {
	if f.out == nil {
		return nil, nil
	}
	out := f.out
	f.out = nil
	if ts[2] != out || ts[0] != f.xT || ts[1] != f.gT {
		return nil, fmt.Errorf("%s: the fused product ran on other arrays", f.ln.key)
	}
	mine := f.ln.output(out.Dtype(), out.Shape()...)
	f.ln.out, f.lin.out = out, mine
	return out, nil
}

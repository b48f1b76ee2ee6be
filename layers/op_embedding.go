package layers

import (
	"fmt"

	"github.com/alibi-go/alibi/layers/internal/vmath"
	"github.com/alibi-go/alibi/layers/parallel"
	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Embedding looks up the rows of table (V, D) for ids, an Int vector (N):
// the result is (N, D).
func Embedding(table, ids *G.Node) (*G.Node, error) { return ScaledEmbedding(table, ids, 1) }

// ScaledEmbedding is Embedding with every row multiplied by scale (a
// transformer scales its token embeddings by sqrt(d_model)), in one op.
func ScaledEmbedding(table, ids *G.Node, scale float64) (*G.Node, error) {
	if table.Dims() != 2 || ids.Dims() != 1 {
		return nil, fmt.Errorf("embedding: want table (V, D) and ids (N), got %v and %v", table.Shape(), ids.Shape())
	}
	op := &embeddingOp{opBase: opBase{key: fmt.Sprintf("Embedding{scale=%v}", scale), arity: 2,
		typ: hm.NewFnType(tt(2, tvA), intVec, tt(2, tvA))}, scale: scale}
	return G.ApplyOp(op, table, ids)
}

type embeddingOp struct {
	opBase
	scale float64
}

func (o *embeddingOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	t, err := shapeOf(o.key, in, 0)
	if err != nil {
		return nil, err
	}
	ids, err := shapeOf(o.key, in, 1)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{ids.TotalSize(), t[1]}, nil
}

// embeddingInputs reads the table and the checked ids.
func embeddingInputs(key string, vals []G.Value) (*tensor.Dense, []int, error) {
	t, err := dense(key, vals[0])
	if err != nil {
		return nil, nil, err
	}
	ids, err := indices(key, vals[1], "id", t.Shape()[0], "table of %d rows")
	if err != nil {
		return nil, nil, err
	}
	return t, ids, nil
}

func (o *embeddingOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	t, ids, err := embeddingInputs(o.key, vals)
	if err != nil {
		return nil, err
	}
	d := t.Shape()[1]
	out := o.output(t.Dtype(), len(ids), d)
	switch t.Dtype() {
	case tensor.Float32:
		tab := elems[float32](t)
		gatherRows(tab, ids, float32(o.scale), elems[float32](out), d)
	case tensor.Float64:
		tab := elems[float64](t)
		gatherRows(tab, ids, o.scale, elems[float64](out), d)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, t.Dtype())
	}
	return out, nil
}

// gatherRows sets out's row i to scale times the table's row ids[i]: rows
// split between the cores, float32 rows copied and scaled by vmath.Scale
// (the same bits as the scalar product).
func gatherRows[T float](table []T, ids []int, scale T, out []T, d int) {
	if serial(len(ids)*d, embeddingChunk) {
		gatherRange(table, ids, scale, out, d, 0, len(ids))
		return
	}
	parallelChunks(len(ids), max(1, embeddingChunk/d), func(_, lo, hi int) { gatherRange(table, ids, scale, out, d, lo, hi) })
}

// embeddingChunk is the fewest elements a core gathers or scatters when the
// embedding's work is split: below it, the split costs more than it saves.
const embeddingChunk = 1 << 15

// gatherRange is gatherRows for the ids lo..hi-1.
func gatherRange[T float](table []T, ids []int, scale T, out []T, d, lo, hi int) {
	if out32, ok := any(out).([]float32); ok {
		tab32 := any(table).([]float32)
		for i := lo; i < hi; i++ {
			o := out32[i*d : (i+1)*d]
			copy(o, tab32[ids[i]*d:(ids[i]+1)*d])
			if scale != 1 {
				vmath.Scale(o, float32(scale))
			}
		}
		return
	}
	for i := lo; i < hi; i++ {
		row, o := table[ids[i]*d:(ids[i]+1)*d], out[i*d:(i+1)*d]
		for j, v := range row {
			o[j] = scale * v
		}
	}
}

func (o *embeddingOp) DiffWRT(int) []bool { return []bool{true, false} }

// SymDiff: the table's gradient is scale times dy, scattered back to the
// rows looked up; the ids get none.
func (o *embeddingOp) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	b := &embeddingGradOp{opBase: opBase{key: fmt.Sprintf("EmbeddingGrad{scale=%v}", o.scale), arity: 3,
		typ: hm.NewFnType(tt(2, tvA), intVec, tt(2, tvA), tt(2, tvA))}, scale: o.scale}
	dt, err := G.ApplyOp(b, in[0], in[1], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dt, nil}, nil
}

// embeddingGradOp computes d table from the table (for its shape), the ids
// and dy.
type embeddingGradOp struct {
	opBase
	scale float64
}

func (o *embeddingGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapeOf(o.key, in, 0)
}

func (o *embeddingGradOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	t, ids, err := embeddingInputs(o.key, vals)
	if err != nil {
		return nil, err
	}
	dy, err := dense(o.key, vals[2])
	if err != nil {
		return nil, err
	}
	d := t.Shape()[1]
	out := o.output(t.Dtype(), t.Shape()...)
	switch dy.Dtype() {
	case tensor.Float32:
		g := elems[float32](dy)
		scatterRows(g, ids, float32(o.scale), elems[float32](out), d)
	case tensor.Float64:
		g := elems[float64](dy)
		scatterRows(g, ids, o.scale, elems[float64](out), d)
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, t.Dtype())
	}
	return out, nil
}

// scatterRows sets out to zero and adds scale*dy[i] to row ids[i], in
// order. The table's rows are split between the cores in ranges that hold
// about as many of the ids each (two cores writing different columns of one
// row slow each other down); each element's sum runs over the ids in order
// whatever the split, so the bits do not depend on it.
func scatterRows[T float](dy []T, ids []int, scale T, out []T, d int) {
	rows := len(out) / d
	if serial(len(ids)*d, embeddingChunk) {
		scatterRange(dy, ids, scale, out, d, 0, rows)
		return
	}
	// bounds[c] is the first table row of chunk c: the rows are cut where
	// the running count of the ids passes each chunk's share.
	chunks := parallel.NumChunks(len(ids)*d, embeddingChunk)
	count := make([]int, rows)
	for _, id := range ids {
		count[id]++
	}
	bounds := make([]int, chunks+1)
	bounds[chunks] = rows
	for r, c, seen := 0, 1, 0; r < rows && c < chunks; r++ {
		if seen += count[r]; seen >= c*len(ids)/chunks {
			bounds[c] = r + 1
			c++
		}
	}
	for c := 1; c < chunks; c++ {
		bounds[c] = max(bounds[c], bounds[c-1])
	}
	parallelChunks(chunks, 1, func(_, lo, hi int) { scatterRange(dy, ids, scale, out, d, bounds[lo], bounds[hi]) })
}

// scatterRange is scatterRows for the table rows r0..r1-1: it clears them
// and adds the rows of dy whose ids fall among them.
func scatterRange[T float](dy []T, ids []int, scale T, out []T, d, r0, r1 int) {
	clear(out[r0*d : r1*d])
	for i, id := range ids {
		if id < r0 || id >= r1 {
			continue
		}
		o, g := out[id*d:(id+1)*d], dy[i*d:(i+1)*d]
		for j, v := range g {
			o[j] += scale * v
		}
	}
}

// Add returns a + b for two tensors of the same shape (a residual
// connection), as an op that reuses its output buffer.
func Add(a, b *G.Node) (*G.Node, error) {
	if !a.Shape().Eq(b.Shape()) {
		return nil, fmt.Errorf("add: shapes %v and %v differ", a.Shape(), b.Shape())
	}
	return G.ApplyOp(NewAddOp(), a, b)
}

// NewAddOp returns the op of Add: a + b for two tensors of one shape, into
// an output buffer it keeps (or borrows from Buffers). A runner can put it
// in place of Gorgonia's own addition of same-shape tensors (the sums of
// gradients that Grad builds), with the same bits: IEEE addition is exact
// to the bit whichever code performs it.
func NewAddOp() G.Op {
	return &addOp{opBase{key: "Add", arity: 2, typ: hm.NewFnType(tvA, tvA, tvA)}}
}

type addOp struct{ opBase }

func (o *addOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(o.key, in, 0)
}

func (o *addOp) Do(vals ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(vals)); err != nil {
		return nil, err
	}
	ts, err := o.denseAll(vals)
	if err != nil {
		return nil, err
	}
	out := o.output(ts[0].Dtype(), ts[0].Shape()...)
	switch ts[0].Dtype() {
	case tensor.Float32:
		a := elems[float32](ts[0])
		addVec(a, elems[float32](ts[1]), elems[float32](out))
	case tensor.Float64:
		a := elems[float64](ts[0])
		addVec(a, elems[float64](ts[1]), elems[float64](out))
	default:
		return nil, fmt.Errorf("%s: unsupported dtype %v", o.key, ts[0].Dtype())
	}
	return out, nil
}

func addVec[T float](a, b, out []T) {
	if serial(len(a), 16384) {
		addRange(a, b, out)
		return
	}
	parallelChunks(len(a), 16384, func(_, lo, hi int) { addRange(a[lo:hi], b[lo:hi], out[lo:hi]) })
}

// addRange sets out[i] = a[i] + b[i]: float32 with vmath.Add's vector
// kernels (the same bits: IEEE addition is exact to the bit), float64 in Go.
func addRange[T float](a, b, out []T) {
	if o, ok := any(out).([]float32); ok {
		vmath.Add(o, any(a).([]float32)[:len(o)], any(b).([]float32)[:len(o)])
		return
	}
	a, b = a[:len(out)], b[:len(out)]
	for i := range out {
		out[i] = a[i] + b[i]
	}
}

func (o *addOp) DiffWRT(int) []bool { return []bool{true, true} }

// SymDiff: both inputs get dy itself.
func (o *addOp) SymDiff(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	return G.Nodes{grad, grad}, nil
}

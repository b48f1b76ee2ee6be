package model

import (
	"fmt"
	"strings"
	"time"

	"github.com/alibi-go/alibi/layers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// runner executes a graph by calling its ops' Do in topological order, each
// on the values its inputs produced in the same run. Gorgonia's tape
// machine does the same with more bookkeeping per instruction: a goroutine
// and a locked OS thread handed over per run, log formatting and
// allocations per op, which cost as much as the arithmetic of a one-token
// decoding step. A training graph is a graph like any other here: Grad has
// built its gradients as nodes of our ops, plus Gorgonia's additions where
// two ops read one node, which the runner replaces with layers.NewAddOp
// (the same sums, on both cores and into a pooled buffer).
//
// The ops borrow their outputs from one layers.Buffers, and each output goes
// back to it as soon as the last op that reads it has run, so the graph
// holds the buffers of the most that is live at once, not one per op:
// about a layer's worth without gradients; in a training graph, the
// activations the backward pass reads plus a few gradients at a time. The
// gradients of one op then go on in buffers the previous ones left in
// the cache, instead of buffers untouched since the previous step. Only
// the outputs that no op reads, and the ones asked to be kept (the logits,
// the loss, the weights' gradients), stay readable after a run.
type runner struct {
	nodes   []*G.Node
	ops     []G.Op    // nil for the graph's inputs and constants, read as bound
	args    [][]int   // for each op, the indices of its inputs in nodes
	release [][]int   // for each op, the nodes whose last reader it is
	vals    []G.Value // the value of every node in the last run
	in      []G.Value // scratch: the arguments of one op
	out     map[*G.Node]int
	buffers *layers.Buffers
	timer   OpTimes  // if not nil, where run adds each op's wall time (TimeOps)
	kinds   []string // each op's kind for timer, set with it
}

// newRunner orders the nodes of g for execution. The values of keep stay
// readable after a run even if ops read them.
func newRunner(g *G.ExprGraph, keep ...*G.Node) (*runner, error) {
	sorted, err := G.Sort(g)
	if err != nil {
		return nil, err
	}
	n := len(sorted)
	r := &runner{nodes: make([]*G.Node, n), ops: make([]G.Op, n), args: make([][]int, n), vals: make([]G.Value, n), out: make(map[*G.Node]int, n)}
	for i, node := range sorted { // Sort puts the roots first
		r.nodes[n-1-i] = node
	}
	most := 0
	for i, node := range r.nodes {
		r.out[node] = i
		var children []*G.Node
		for it := g.From(node.ID()); it.Next(); { // the inputs, in order
			children = append(children, it.Node().(*G.Node))
		}
		if len(children) == 0 {
			continue
		}
		r.ops[i] = node.Op()
		if isGorgoniaAdd(node, children) {
			r.ops[i] = layers.NewAddOp()
		}
		for _, c := range children {
			j, ok := r.out[c]
			if !ok {
				return nil, fmt.Errorf("graph: node %v runs before its input %v", node, c)
			}
			r.args[i] = append(r.args[i], j)
		}
		most = max(most, len(children))
	}
	r.in = make([]G.Value, 0, most)
	kept := make([]bool, n)
	for _, node := range keep {
		if j, ok := r.out[node]; ok {
			kept[j] = true
		}
	}
	r.pool(kept)
	return r, nil
}

// isGorgoniaAdd reports whether node is Gorgonia's own addition of two
// tensors of one shape and floating-point type: the sum of two gradients
// of one node, which Grad builds where a node is read by two ops.
func isGorgoniaAdd(node *G.Node, in []*G.Node) bool {
	if _, ours := node.Op().(layers.PooledOp); ours || len(in) != 2 {
		return false
	}
	if !strings.HasPrefix(node.Op().String(), "+ ") {
		return false
	}
	dt := node.Dtype()
	return (dt == tensor.Float32 || dt == tensor.Float64) && in[0].Dtype() == dt && in[1].Dtype() == dt &&
		in[0].Shape().Eq(node.Shape()) && in[1].Shape().Eq(node.Shape())
}

// pool makes every op borrow its output from one Buffers and works out,
// for each op, which outputs it reads for the last time.
func (r *runner) pool(kept []bool) {
	r.buffers = layers.NewBuffers()
	r.release = make([][]int, len(r.nodes))
	last := make([]int, len(r.nodes)) // the last reader of each node, or -1
	for i := range last {
		last[i] = -1
	}
	for i, args := range r.args {
		for _, j := range args {
			last[j] = i
		}
	}
	for j, op := range r.ops {
		p, ok := op.(layers.PooledOp)
		if !ok {
			continue // Gorgonia's own ops (none in this model) keep their values
		}
		p.UseBuffers(r.buffers)
		if last[j] >= 0 && !kept[j] {
			r.release[last[j]] = append(r.release[last[j]], j)
		}
	}
}

// peakBytes is what the pooled outputs of one run need at most, in bytes,
// worked out from the nodes' shapes without running the graph: the
// Buffers' Bytes after a run.
func (r *runner) peakBytes() int64 {
	type key struct {
		size int // of an element
		n    int
	}
	free := map[key]int{}
	var total int64
	for i, op := range r.ops {
		if _, ok := op.(layers.PooledOp); ok {
			node := r.nodes[i]
			k := key{int(node.Dtype().Size()), node.Shape().TotalSize()}
			if free[k] > 0 {
				free[k]--
			} else {
				total += int64(k.size) * int64(k.n)
			}
			if s, ok := op.(layers.ScratchOp); ok {
				in := make([]tensor.Shape, len(r.args[i]))
				for a, j := range r.args[i] {
					in[a] = r.nodes[j].Shape()
				}
				if n := s.ScratchElems(in...); n > 0 && free[key{k.size, n}] == 0 {
					total += int64(k.size) * int64(n)
					free[key{k.size, n}]++ // given back before the op returns
				}
			}
		}
		for _, j := range r.release[i] {
			node := r.nodes[j]
			free[key{int(node.Dtype().Size()), node.Shape().TotalSize()}]++
		}
	}
	return total
}

// run executes every op once.
func (r *runner) run() error {
	for i, node := range r.nodes {
		op := r.ops[i]
		if op == nil {
			r.vals[i] = node.Value()
			continue
		}
		in := r.in[:0]
		for _, j := range r.args[i] {
			in = append(in, r.vals[j])
		}
		var start time.Time
		if r.timer != nil {
			start = time.Now()
		}
		v, err := op.Do(in...)
		if r.timer != nil {
			r.timer[r.kinds[i]] += time.Since(start)
		}
		if err != nil {
			return fmt.Errorf("%v: %w", op, err)
		}
		r.vals[i] = v
		for _, j := range r.release[i] {
			r.ops[j].(layers.PooledOp).ReleaseOutput()
			r.vals[j] = nil
		}
	}
	return nil
}

// value returns the value node took in the last run.
func (r *runner) value(node *G.Node) G.Value { return r.vals[r.out[node]] }

package model

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// runner executes a graph without gradients by calling its ops' Do in
// topological order, each on the values its inputs produced in the same run.
// Gorgonia's tape machine does the same with more bookkeeping per
// instruction: a goroutine and a locked OS thread handed over per run,
// log formatting and allocations per op, which cost as much as the
// arithmetic of a one-token decoding step. Training graphs keep the tape
// machine, which also runs the gradient ops and accumulates into the
// dual values.
type runner struct {
	nodes []*G.Node
	ops   []G.Op    // nil for the graph's inputs and constants, read as bound
	args  [][]int   // for each op, the indices of its inputs in nodes
	vals  []G.Value // the value of every node in the last run
	in    []G.Value // scratch: the arguments of one op
	out   map[*G.Node]int
}

// newRunner orders the nodes of g for execution.
func newRunner(g *G.ExprGraph) (*runner, error) {
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
	return r, nil
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
		v, err := op.Do(in...)
		if err != nil {
			return fmt.Errorf("%v: %w", op, err)
		}
		r.vals[i] = v
	}
	return nil
}

// value returns the value node took in the last run.
func (r *runner) value(node *G.Node) G.Value { return r.vals[r.out[node]] }

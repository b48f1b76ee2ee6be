package model

import (
	"strings"
	"time"

	G "gorgonia.org/gorgonia"
)

// OpTimes is where a graph's ops spent their wall time, by kind: the op's
// name without its parameters ("LinearGrad", "Attention", "LayerNorm",
// "Add" for the sums of two gradients of one node, ...). Each op's Do is
// timed as a whole, its parallel sections included, so the kinds add up
// to the graph's run less the runner's own bookkeeping. It answers "where
// does a step's time go" by the clock, where a CPU profile counts samples
// on each core (see BenchmarkTrainStepOps in package train).
type OpTimes map[string]time.Duration

// TimeOps makes every later Execute of the graph add the wall time of each
// op to t, under its kind; nil stops the timing. Timing costs two clock
// reads per op.
func (gr *Graph) TimeOps(t OpTimes) {
	if gr.run != nil {
		gr.run.timeOps(t)
	}
}

// timeOps sets the runner's timer and, on first use, the kind of each op.
func (r *runner) timeOps(t OpTimes) {
	r.timer = t
	if t == nil || r.kinds != nil {
		return
	}
	r.kinds = make([]string, len(r.ops))
	for i, op := range r.ops {
		if op != nil {
			r.kinds[i] = opKind(op)
		}
	}
}

// opKind is an op's name up to its parameters: "LinearGrad{wrt=1, fp32}"
// is a "LinearGrad".
func opKind(op G.Op) string {
	s := op.String()
	if i := strings.IndexAny(s, "{( "); i > 0 {
		return s[:i]
	}
	return s
}

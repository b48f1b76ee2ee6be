package model

import (
	"runtime"
	"testing"
)

// EvalGraphBytes is within 3% of the heap an evaluation graph really holds
// after a run, for several shapes and schemes.
func TestEvalGraphBytes(t *testing.T) {
	for _, c := range []Config{
		{Vocab: 256, DModel: 128, NLayers: 4, NHeads: 4, DFF: 512, Pos: PosALiBi},
		{Vocab: 256, DModel: 64, NLayers: 2, NHeads: 4, DFF: 512, Pos: PosSinusoidal},
		{Vocab: 512, DModel: 96, NLayers: 3, NHeads: 3, DFF: 200, Pos: PosNone},
		{Vocab: 256, DModel: 64, NLayers: 2, NHeads: 4, DFF: 256, Pos: PosALiBi, LogitScale: LogitScaleLogLength},
		{Vocab: 256, DModel: 64, NLayers: 2, NHeads: 4, DFF: 256, Pos: "fox"},
	} {
		for _, shape := range [][2]int{{1, 4096}, {8, 300}} {
			c.TrainLen, c.Seed = 128, 1
			m, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&before)
			g, err := m.NewGraph(shape[0], shape[1], false)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Execute(make([]int, shape[0]*shape[1]), nil); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(g)
			live := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			est := float64(m.EvalGraphBytes(shape[0], shape[1]))
			if r := est / live; r < 0.97 || r > 1.03 {
				t.Errorf("%s d %d f %d v %d L %d, batch %d x %d: estimate %.0f bytes, live %.0f (ratio %.3f)",
					c.Pos, c.DModel, c.DFF, c.Vocab, c.NLayers, shape[0], shape[1], est, live, r)
			}
			g.Close()
		}
	}
}

// A closed training graph's memory is free after one garbage collection
// (the tape machine's finalizer would otherwise keep it for another).
func TestClosedGraphMemoryFreed(t *testing.T) {
	m, err := New(Config{Vocab: 256, DModel: 64, NLayers: 2, NHeads: 4, DFF: 256, Pos: PosALiBi, TrainLen: 128, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var base, held, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&base)
	g, err := m.NewGraph(16, 128, true)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, 16*128)
	if err := g.Execute(ids, ids); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&held)
	g.Close()
	g = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	used := float64(held.HeapAlloc) - float64(base.HeapAlloc)
	left := float64(after.HeapAlloc) - float64(base.HeapAlloc)
	if used < 10<<20 || left > 0.1*used {
		t.Fatalf("the graph held %.0f MB; one collection after Close, %.0f MB are still live", used/(1<<20), left/(1<<20))
	}
}

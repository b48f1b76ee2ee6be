package model

import (
	"runtime"
	"testing"

	"github.com/alibi-go/alibi/layers/layerstest/longtest"
)

// liveBytes is the heap an evaluation graph of m holds after one run.
func liveBytes(t *testing.T, m *Model, batch, length int) float64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	g, err := m.NewGraph(batch, length, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Execute(make([]int, batch*length), nil); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(g)
	g.Close()
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}

// EvalGraphBytes follows the heap an evaluation graph really holds after a
// run within 3%, for every scheme, as the length and the batch grow (the
// growth is compared, so that the attention's scratch, a fixed few hundred
// KiB a layer that the estimate leaves out, drops out). By default a
// scheme of each kind runs (ALiBi's bias in the kernel, a position table,
// a learned bias); the long tests add the others and a wider, deeper model.
func TestEvalGraphBytes(t *testing.T) {
	configs := []Config{
		{Vocab: 256, DModel: 64, NLayers: 2, NHeads: 4, DFF: 512, Pos: PosSinusoidal},
		{Vocab: 256, DModel: 64, NLayers: 2, NHeads: 4, DFF: 256, Pos: PosALiBi, LogitScale: LogitScaleLogLength},
		{Vocab: 256, DModel: 64, NLayers: 3, NHeads: 4, DFF: 256, Pos: PosT5},
	}
	if longtest.Enabled {
		configs = append(configs,
			Config{Vocab: 256, DModel: 128, NLayers: 4, NHeads: 4, DFF: 512, Pos: PosALiBi},
			Config{Vocab: 512, DModel: 96, NLayers: 3, NHeads: 3, DFF: 200, Pos: PosNone},
			Config{Vocab: 256, DModel: 64, NLayers: 2, NHeads: 4, DFF: 256, Pos: "fox"},
			Config{Vocab: 256, DModel: 64, NLayers: 6, NHeads: 4, DFF: 256, Pos: PosRoPE},
			Config{Vocab: 256, DModel: 64, NLayers: 3, NHeads: 4, DFF: 256, Pos: PosKerple},
			Config{Vocab: 256, DModel: 64, NLayers: 3, NHeads: 4, DFF: 256, Pos: PosFire},
		)
	}
	for _, c := range configs {
		c.TrainLen, c.Seed = 128, 1
		m, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		liveBytes(t, m, 1, 1024) // the first run allocates what the process keeps (kernel scratch)
		base := liveBytes(t, m, 1, 1024)
		baseEst := float64(m.EvalGraphBytes(1, 1024))
		// The batch first: the model keeps one sinusoidal table, of the
		// last length built, which a longer length replaces.
		for _, shape := range [][2]int{{4, 1024}, {1, 4096}} {
			live := liveBytes(t, m, shape[0], shape[1]) - base
			est := float64(m.EvalGraphBytes(shape[0], shape[1])) - baseEst
			if r := est / live; r < 0.97 || r > 1.03 {
				t.Errorf("%s d %d f %d v %d L %d, from 1 x 1024 to %d x %d: the estimate grows by %.0f bytes, the heap by %.0f (ratio %.3f)",
					c.Pos, c.DModel, c.DFF, c.Vocab, c.NLayers, shape[0], shape[1], est, live, r)
			}
		}
	}
}

// An evaluation graph's memory hardly grows with the depth: its ops'
// outputs are reused once read, so the six layers that eight have over two
// add less than one of a layer's hidden activations (N x d_ff, 4 MiB here;
// kept outputs would add several of them a layer). What grows is each
// layer's position tables and attention scratch. ALiBi by default; the
// long tests add RoPE and sinusoidal positions.
func TestEvalMemoryFlatInDepth(t *testing.T) {
	for _, pos := range longtest.Pick([]string{PosALiBi}, []string{PosALiBi, PosRoPE, PosSinusoidal}) {
		var live [2]float64
		for i, layers := range []int{2, 8} {
			m, err := New(Config{Vocab: 256, DModel: 64, NLayers: layers, NHeads: 4, DFF: 256, Pos: pos, TrainLen: 128, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			live[i] = liveBytes(t, m, 1, 4096)
		}
		if hidden := float64(4096 * 256 * 4); live[1]-live[0] > hidden {
			t.Errorf("%s at 4096 tokens: 2 layers hold %.1f MiB, 8 layers %.1f MiB", pos, live[0]/(1<<20), live[1]/(1<<20))
		}
	}
}

// A closed training graph's memory is free after one garbage collection
// (an earlier build ran training graphs on Gorgonia's tape machine, whose
// finalizer kept it for another).
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

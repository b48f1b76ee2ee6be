package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/alibi-go/alibi/layers/layerstest"
)

// A scoring graph's logits are the full graph's logits of the last rows of
// each sequence, for every scheme, several sequences, and 1, some or all
// rows scored (float32 rounding: the same kernels, other tile shapes).
func TestScoringGraphEqualsFullGraph(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const batch, length = 3, 40
	ids := randomTokens(rng, batch*length, 256)
	for _, pos := range Schemes() {
		m := decodeModel(t, pos)
		full, err := m.NewGraph(batch, length, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := full.Execute(ids, nil); err != nil {
			t.Fatal(err)
		}
		all := full.LogitsData()
		for _, k := range []int{1, 5, length} {
			t.Run(fmt.Sprintf("%s k=%d", pos, k), func(t *testing.T) {
				g, err := m.NewScoringGraph(batch, length, k)
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				for range 2 { // a second run reuses the buffers
					if err := g.Execute(ids, nil); err != nil {
						t.Fatal(err)
					}
				}
				got := g.LogitsData()
				if len(got) != batch*k*256 {
					t.Fatalf("%d logits, want %d", len(got), batch*k*256)
				}
				var want []float32
				for b := range batch {
					want = append(want, all[(b*length+length-k)*256:(b+1)*length*256]...)
				}
				if e := layerstest.RelErr(got, toFloat64(want)); e > 1e-5 {
					t.Errorf("relative error %.3g against the full graph's rows", e)
				}
			})
		}
		full.Close()
	}
}

func TestScoringGraphRejects(t *testing.T) {
	m := decodeModel(t, PosALiBi)
	for _, k := range []int{0, -1, 9} {
		if _, err := m.NewScoringGraph(1, 8, k); err == nil {
			t.Errorf("%d scored rows of 8: no error", k)
		}
	}
	g, err := m.NewScoringGraph(1, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Execute(make([]int, 8), make([]int, 8)); err == nil {
		t.Error("a scoring graph took targets")
	}
}

func toFloat64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// A scoring decoding graph gives the logits of the full pass's last rows of
// each chunk, for every scheme, prefilling a sequence chunk by chunk.
func TestScoringDecodeGraphEqualsFullPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n, chunk = 70, 16
	ids := randomTokens(rng, n, 256)
	for _, pos := range Schemes() {
		t.Run(pos, func(t *testing.T) {
			m := decodeModel(t, pos)
			want := fullLogits(t, m, ids)
			c := m.NewCache(1)
			for at := 0; at < n; at += chunk {
				q := min(chunk, n-at)
				k := 1 + at/chunk%3 // 1, 2 or 3 rows
				g, err := m.NewScoringDecodeGraph(c, q, k)
				if err != nil {
					t.Fatal(err)
				}
				if err := g.Execute(ids[at:at+q], nil); err != nil {
					t.Fatal(err)
				}
				got := g.LogitsData()
				if e := layerstest.RelErr(got, toFloat64(want[(at+q-k)*256:(at+q)*256])); e > 1e-5 {
					t.Errorf("chunk at %d: relative error %.3g", at, e)
				}
				g.Close()
			}
		})
	}
}

package model

import (
	"math/rand/v2"
	"testing"

	"github.com/alibi-go/alibi/layers/layerstest"
)

// A chunk that outgrows a cache with slack (n < capacity when it grows)
// must move every head's rows from the old block's offsets. Runs of 5, 1, 6
// tokens: capacities 5, 10, then 20 at n = 6 < 10.
func TestCacheGrowsWithSlack(t *testing.T) {
	for _, pos := range []string{PosALiBi, PosRoPE, PosNone} {
		m := decodeModel(t, pos) // 4 heads
		ids := randomTokens(rand.New(rand.NewPCG(3, 4)), 12, 256)
		want := fullLogits(t, m, ids)
		c := m.NewCache(1)
		at := 0
		for _, q := range []int{5, 1, 6} {
			g, err := m.NewDecodeGraph(c, q)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Execute(ids[at:at+q], nil); err != nil {
				t.Fatal(err)
			}
			got := g.LogitsData()
			for i := 0; i < q; i++ {
				if e := layerstest.RelErr(got[i*256:(i+1)*256], want[(at+i)*256:(at+i+1)*256]); !(e <= 1e-5) {
					t.Fatalf("%s: position %d (run of %d at %d): logits error %.3g against the full pass", pos, at+i, q, at, e)
				}
			}
			g.Close()
			at += q
		}
	}
}

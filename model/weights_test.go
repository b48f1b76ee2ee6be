package model

import (
	"strings"
	"testing"
)

// Decays gives weight decay to the matrices of the embedding, the
// attention and MLP projections and the head, as the reference's AdamW
// groups do, and to no bias, no LayerNorm gain or shift and no position
// parameter except FoX's gate projection: the mask written out by name for
// one layer, and every layer of a two-layer model checked by the same
// rule.
func TestDecaysMask(t *testing.T) {
	decayed := map[string]bool{
		"tok_emb.weight": true, "head.weight": true,
		"attn.qkv.weight": true, "attn.out.weight": true,
		"mlp.fc1.weight": true, "mlp.fc2.weight": true,
		"attn.fgate.weight": true, // FoX's gate: a projection of the hidden state
	}
	notDecayed := map[string]bool{
		"ln1.weight": true, "ln1.bias": true, "ln2.weight": true, "ln2.bias": true,
		"ln_f.weight": true, "ln_f.bias": true,
		"attn.qkv.bias": true, "attn.out.bias": true, "mlp.fc1.bias": true, "mlp.fc2.bias": true,
		"attn.fgate.bias": true, "pos.t5.weight": true, "attn.kerple": true, "attn.fire": true,
	}
	for _, pos := range []string{PosALiBi, PosSinusoidal, PosRoPE, PosT5, PosKerple, PosFire, "fox"} {
		w := InitWeights(tinyConfig(pos))
		seen := 0
		for _, name := range w.Names {
			short := name
			if strings.HasPrefix(name, "layers.") { // layers.N.rest -> rest
				short = name[strings.Index(name[len("layers."):], ".")+len("layers.")+1:]
			}
			want, known := decayed[short], decayed[short] || notDecayed[short]
			if !known {
				t.Errorf("%s: weight %q is in neither list", pos, name)
				continue
			}
			seen++
			if got := w.Decays(name); got != want {
				t.Errorf("%s: Decays(%q) = %v, want %v", pos, name, got, want)
			}
		}
		if seen < 16 {
			t.Errorf("%s: only %d weights checked", pos, seen)
		}
	}
}

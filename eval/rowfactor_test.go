package eval

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/alibi-go/alibi/model"
)

// Without a factor, an extension scores every window of a length at that
// length's factor (length over L), the shorter last window too: the same
// bits as the factor given outright, for the perplexity and the attention
// statistics alike. Scored at its own factor, the last window of 12 tokens
// would have factor 1.5, and another result.
func TestDefaultFactorIsTheRowFactor(t *testing.T) {
	toks := stream(109) // 108 targets: 6 windows of 16 and one of 12
	for _, c := range []struct{ pos, method string }{{model.PosALiBi, "interp"}, {model.PosRoPE, "yarn"}, {model.PosRoPE, "pi"}} {
		m := testModel(t, c.pos)
		score := func(factor float64) (Result, AttentionResult) {
			t.Helper()
			if err := m.Extend(c.method, factor); err != nil {
				t.Fatal(err)
			}
			r, err := Perplexity(m, toks, Options{Len: 16})
			if err != nil {
				t.Fatal(err)
			}
			a, err := AttentionStats(m, toks, Options{Len: 16})
			if err != nil {
				t.Fatal(err)
			}
			return r, a
		}
		def, defAttn := score(0)
		if _, f := m.Extension(); f != 0 {
			t.Errorf("%s: the factor stayed at %v after scoring; want 0 again", c.method, f)
		}
		row, rowAttn := score(2) // 16 / 8
		if def.NatsPerToken != row.NatsPerToken || !slices.EqualFunc(def.PositionLoss, row.PositionLoss, sameFloat) {
			t.Errorf("%s: default factor %.17g nats, the row's factor 2 %.17g", c.method, def.NatsPerToken, row.NatsPerToken)
		}
		if !reflect.DeepEqual(defAttn.Layers, rowAttn.Layers) || defAttn.Queries == 0 {
			t.Errorf("%s: attention statistics %+v with the default factor, %+v with 2", c.method, defAttn.Layers, rowAttn.Layers)
		}
		if tail, _ := score(1.5); tail.PositionLoss[11] == row.PositionLoss[11] {
			t.Errorf("%s: factors 1.5 and 2 score position 11 alike (%v): the test cannot tell the factors apart", c.method, tail.PositionLoss[11])
		}
	}
}

func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

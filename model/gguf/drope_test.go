package gguf

import (
	"testing"

	"github.com/alibi-go/alibi/model"
)

// A rope model whose rotation DroPE dropped is exported as what it runs:
// mpt without ALiBi, the causal mask alone.
func TestDroppedRopeExportsAsNone(t *testing.T) {
	m, err := model.New(model.Config{Vocab: 256, DModel: 16, NLayers: 1, NHeads: 2, DFF: 32, TrainLen: 16, Pos: model.PosRoPE, DropeStep: 5})
	if err != nil {
		t.Fatal(err)
	}
	if a, err := architecture(m, 64); err != nil || a.name != "gptneox" {
		t.Fatalf("before the drop: %v, %v", a, err)
	}
	m.DropPositions()
	a, err := architecture(m, 64)
	if err != nil || a.name != "mpt" || len(a.kv) != 1 || a.kv[0].Value != float32(0) {
		t.Fatalf("after the drop: %+v, %v", a, err)
	}
}

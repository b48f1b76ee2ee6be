package model

import (
	"bytes"
	"testing"
)

// FuzzDecodeCheckpoint: arbitrary bytes never panic the checkpoint loader;
// whatever loads re-encodes to a checkpoint that loads again identically.
func FuzzDecodeCheckpoint(f *testing.F) {
	m, err := New(Config{Vocab: 8, DModel: 4, NLayers: 1, NHeads: 2, DFF: 4, Pos: PosALiBi, TrainLen: 4, Seed: 1})
	if err != nil {
		f.Fatal(err)
	}
	var good bytes.Buffer
	if err := NewCheckpoint(m).Encode(&good); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	f.Add(good.Bytes()[:good.Len()/2])
	f.Add([]byte("\x08\x00\x00\x00\x00\x00\x00\x00{}      "))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCheckpoint(b)
		if err != nil {
			return
		}
		var again bytes.Buffer
		if err := c.Encode(&again); err != nil {
			t.Fatalf("loaded checkpoint does not re-encode: %v", err)
		}
		c2, err := DecodeCheckpoint(again.Bytes())
		if err != nil {
			t.Fatalf("re-encoded checkpoint does not load: %v", err)
		}
		if c2.Config != c.Config || len(c2.Weights.Names) != len(c.Weights.Names) {
			t.Fatal("round trip changed the checkpoint")
		}
	})
}

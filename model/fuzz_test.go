package model

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"github.com/alibi-go/alibi/model/safetensors"
)

// FuzzDecodeCheckpoint: arbitrary bytes never panic the checkpoint loader;
// whatever loads re-encodes to a checkpoint that loads again identically:
// the same config, every weight and slope bit for bit, the same extra
// tensors and metadata.
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
	withState := NewCheckpoint(m)
	withState.Extra = append(withState.Extra, safetensors.F32("optim.m.x", []int{2}, []float32{1, -0}), safetensors.U8("sampler", []int{3}, []byte{1, 2, 3}))
	withState.Meta["train.step"] = "12"
	var state bytes.Buffer
	if err := withState.Encode(&state); err != nil {
		f.Fatal(err)
	}
	f.Add(state.Bytes())
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
		if c2.Config != c.Config {
			t.Fatalf("round trip changed the config: %+v, %+v", c.Config, c2.Config)
		}
		if !reflect.DeepEqual(c2.Weights.Names, c.Weights.Names) {
			t.Fatalf("round trip changed the weight names: %v, %v", c.Weights.Names, c2.Weights.Names)
		}
		for _, name := range c.Weights.Names {
			a, b := c.Weights.Data(name), c2.Weights.Data(name)
			if !c.Weights.Tensor(name).Shape().Eq(c2.Weights.Tensor(name).Shape()) || !sameBits(a, b) {
				t.Fatalf("round trip changed weight %s", name)
			}
		}
		if !sameBits(c.PositionBuffer, c2.PositionBuffer) || (c.PositionBuffer == nil) != (c2.PositionBuffer == nil) {
			t.Fatalf("round trip changed the slopes: %v, %v", c.PositionBuffer, c2.PositionBuffer)
		}
		if !reflect.DeepEqual(c2.Extra, c.Extra) {
			t.Fatal("round trip changed the extra tensors")
		}
		if !reflect.DeepEqual(c2.Meta, c.Meta) {
			t.Fatalf("round trip changed the metadata: %v, %v", c.Meta, c2.Meta)
		}
	})
}

// sameBits reports whether a and b hold the same float32 bit patterns (NaNs
// and signed zeros included).
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

package model

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/layers/position"
	"github.com/alibi-go/alibi/model/safetensors"
)

func savedCheckpoint(t *testing.T, pos string) (string, *Checkpoint) {
	t.Helper()
	m, err := New(tinyConfig(pos))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCheckpoint(m)
	c.Extra = []safetensors.Tensor{safetensors.F32("optim.m.x", []int{2}, []float32{1, 2})}
	c.Meta["train.step"] = "7"
	path := filepath.Join(t.TempDir(), "ck.safetensors")
	if err := SaveCheckpoint(path, c); err != nil {
		t.Fatal(err)
	}
	return path, c
}

func TestCheckpointRoundTrip(t *testing.T) {
	path, c := savedCheckpoint(t, PosALiBi)
	got, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Config != c.Config || got.Meta["train.step"] != "7" {
		t.Fatalf("config/meta: %+v %v", got.Config, got.Meta)
	}
	for _, name := range c.Weights.Names {
		a, b := c.Weights.Data(name), got.Weights.Data(name)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s[%d]: %g != %g", name, i, a[i], b[i])
			}
		}
	}
	if len(got.PositionBuffer) != 4 || got.PositionBuffer[0] != 0.25 || got.PositionBuffer[3] != 1.0/256 {
		t.Fatalf("slopes %v", got.PositionBuffer)
	}
	if x, ok := got.ExtraTensor("optim.m.x"); !ok || len(x.Data) != 8 {
		t.Fatalf("extra tensor %v", x)
	}
	// Encoding is byte-reproducible.
	var a, b bytes.Buffer
	if err := c.Encode(&a); err != nil {
		t.Fatal(err)
	}
	if err := got.Encode(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("re-encoding a loaded checkpoint changed its bytes")
	}
}

func TestCheckpointCorruptionDetected(t *testing.T) {
	path, _ := savedCheckpoint(t, PosSinusoidal)
	good, _ := os.ReadFile(path)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"random bytes", []byte("\x93\x17garbage that is not a checkpoint at all"), "safetensors"},
		{"truncated", good[:len(good)/2], "safetensors"},
		{"flipped bit in a weight", flip(good, weightByte(t, good, "layers.0.attn.qkv.weight", 37)), "checksum"},
		{"flipped bit in the embedding", flip(good, weightByte(t, good, "tok_emb.weight", 0)), "checksum"},
		{"empty", nil, "safetensors"},
	}
	for _, tc := range tests {
		p := filepath.Join(t.TempDir(), "bad.safetensors")
		if err := os.WriteFile(p, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadCheckpoint(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.name, err, tc.want)
		}
	}
	// Every truncation is an error, never a panic.
	for n := 0; n < len(good); n += 97 {
		if _, err := DecodeCheckpoint(good[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
}

// weightByte returns the file offset of byte k of the named tensor's data,
// read from the safetensors header.
func weightByte(t *testing.T, file []byte, name string, k int) int {
	t.Helper()
	n := int(binary.LittleEndian.Uint64(file[:8]))
	var header map[string]json.RawMessage
	if err := json.Unmarshal(file[8:8+n], &header); err != nil {
		t.Fatal(err)
	}
	var info struct {
		Offsets [2]int `json:"data_offsets"`
	}
	if err := json.Unmarshal(header[name], &info); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if k >= info.Offsets[1]-info.Offsets[0] {
		t.Fatalf("%s has %d bytes", name, info.Offsets[1]-info.Offsets[0])
	}
	return 8 + n + info.Offsets[0] + k
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0x40
	return c
}

// A checkpoint whose position buffer does not fit its config is refused,
// even with a valid checksum: ALiBi slopes for 3 heads in a 4-head model,
// or slopes in a model whose scheme has none.
func TestCheckpointBufferMismatchRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Checkpoint)
		want string
	}{
		{"three slopes for four heads", func(c *Checkpoint) { c.PositionBuffer = c.PositionBuffer[:3] }, "3 values, want 4"},
		{"slopes for no scheme's buffer", func(c *Checkpoint) { c.Config.Pos = PosNone }, "does not match pos"},
	} {
		m, err := New(tinyConfig(PosALiBi))
		if err != nil {
			t.Fatal(err)
		}
		c := NewCheckpoint(m)
		tc.edit(c)
		var b bytes.Buffer
		if err := c.Encode(&b); err != nil { // a checksum of the edited contents
			t.Fatal(err)
		}
		if _, err := DecodeCheckpoint(b.Bytes()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: DecodeCheckpoint error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestCheckpointOfAnotherShapeRefused(t *testing.T) {
	path, c := savedCheckpoint(t, PosALiBi)
	got, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	other := c.Config
	other.DModel = 64
	if _, err := FromWeights(other, got.Weights); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Fatalf("weights of d_model 32 accepted for 64: %v", err)
	}
}

// Every registered scheme, with and without log-length scaling, survives a
// checkpoint: the loaded model's logits equal the saved one's bit for bit,
// and an extension applied to the loaded model leaves the checkpoint it was
// loaded from unchanged.
func TestCheckpointRoundTripEveryScheme(t *testing.T) {
	ids := randomTokens(rand.New(rand.NewPCG(4, 4)), 40, 256)
	for _, pos := range Schemes() {
		for _, scale := range []string{LogitScaleNone, LogitScaleLogLength} {
			cfg := Config{Vocab: 256, DModel: 32, NLayers: 2, NHeads: 4, DFF: 64, Pos: pos, TrainLen: 16, Seed: 5, LogitScale: scale}
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			perturbWeights(m.Weights, rand.New(rand.NewPCG(6, 7)))
			m.Project()
			path := filepath.Join(t.TempDir(), "ck.safetensors")
			if err := SaveCheckpoint(path, NewCheckpoint(m)); err != nil {
				t.Fatal(err)
			}
			c, err := LoadCheckpoint(path)
			if err != nil {
				t.Fatalf("%s %s: %v", pos, scale, err)
			}
			back, err := c.Model()
			if err != nil {
				t.Fatal(err)
			}
			if back.Config.Label() != cfg.Label() {
				t.Errorf("%s: loaded as %s", cfg.Label(), back.Config.Label())
			}
			sameLogits(t, m, back, ids, false)
			for _, e := range position.ExtensionsFor(pos) {
				if err := back.Extend(e, 0); err != nil {
					t.Fatal(err)
				}
			}
			var a, b bytes.Buffer
			if err := NewCheckpoint(m).Encode(&a); err != nil {
				t.Fatal(err)
			}
			if err := NewCheckpoint(back).Encode(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("%s: the checkpoint of the loaded (and extended) model differs from the saved one", cfg.Label())
			}
		}
	}
}

// A file that is not a checkpoint at all is named for what it is.
func TestNotACheckpoint(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"tokenizer.json", []byte("{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null\n}\n"), "not a checkpoint: the file is JSON"},
		{"model.gguf", append([]byte("GGUF\x03\x00\x00\x00"), make([]byte, 40)...), "the file is a GGUF model"},
		{"notes.txt", []byte("Light is refracted by the prism, and the rays of the spectrum are spread."), "the file is text"},
	} {
		_, err := DecodeCheckpoint(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "header length") {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

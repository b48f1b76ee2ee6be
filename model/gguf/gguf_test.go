package gguf_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/data/bpe"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/gguf"
)

// A file written and read back has the same metadata and tensors, and its
// bytes follow GGUF's layout: the header, then each tensor's data at a
// multiple of 32 bytes.
func TestRoundTrip(t *testing.T) {
	a, _ := gguf.Encode("a", []uint64{3}, gguf.F32, []float32{1, -2, 3.5})
	b, _ := gguf.Encode("b.weight", []uint64{32, 2}, gguf.Q8_0, make([]float32, 64))
	f := &gguf.File{
		KV: []gguf.KV{{Key: "u", Value: uint32(7)}, {Key: "i", Value: int32(-3)}, {Key: "f", Value: float32(0.5)}, {Key: "b", Value: true},
			{Key: "s", Value: "héllo"}, {Key: "n", Value: uint64(1 << 40)}, {Key: "as", Value: []string{"x", "", "Ġy"}},
			{Key: "ai", Value: []int32{1, -1}}, {Key: "af", Value: []float32{2}}},
		Tensors: []gguf.Tensor{a, b},
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	if string(raw[:4]) != "GGUF" || binary.LittleEndian.Uint32(raw[4:]) != 3 || binary.LittleEndian.Uint64(raw[8:]) != 2 || binary.LittleEndian.Uint64(raw[16:]) != 9 {
		t.Fatalf("header % x", raw[:24])
	}
	// The data section: a's 12 bytes padded to 32, then b's 2 blocks of 34
	// padded to 96.
	if n := len(raw); n%32 != 0 || !bytes.Equal(raw[n-128:n-116], a.Data) {
		t.Fatalf("%d bytes; a's data not at the start of the aligned data section", n)
	}
	g, err := gguf.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f, g) {
		t.Fatalf("read back\n%+v\nwant\n%+v", g, f)
	}
	for _, cut := range []int{3, 30, len(raw) - 1} {
		if _, err := gguf.Read(bytes.NewReader(raw[:cut])); err == nil {
			t.Errorf("a file cut at %d bytes was read", cut)
		}
	}
	if _, err := gguf.Read(strings.NewReader("GGML-not-this")); err == nil || !strings.Contains(err.Error(), "not a GGUF file") {
		t.Errorf("not GGUF: %v", err)
	}
	if _, err := (&gguf.File{KV: []gguf.KV{{Key: "x", Value: 1}}}).WriteTo(&buf); err == nil {
		t.Errorf("an int (no GGUF form) was written")
	}
}

// f16 rounds to the nearest half, ties to even; q8_0 is ggml's block of a
// float16 scale max|x|/127 and round(x/scale), half away from zero.
func TestEncodeHandWorked(t *testing.T) {
	f16, _ := gguf.Encode("h", []uint64{4}, gguf.F16, []float32{1, 1.0 / 3, 65504, 1 + 1.0/2048})
	// 1 = 0x3c00; 1/3 = 0x3555 (0.33325); 65504 the largest half 0x7bff;
	// 1 + 2^-11 is the tie between 0x3c00 and 0x3c01: to even, 0x3c00.
	if want := []byte{0x00, 0x3c, 0x55, 0x35, 0xff, 0x7b, 0x00, 0x3c}; !bytes.Equal(f16.Data, want) {
		t.Errorf("f16 % x, want % x", f16.Data, want)
	}
	x := make([]float32, 32)
	x[0], x[1], x[2], x[3] = 127, -63.5, 0.5, -0.5
	q, _ := gguf.Encode("q", []uint64{32}, gguf.Q8_0, x)
	// scale 127/127 = 1 (0x3c00); -63.5 rounds away from zero to -64 (0xc0);
	// 0.5 to 1 and -0.5 to -1.
	if want := []byte{0x00, 0x3c, 127, 0xc0, 1, 0xff, 0}; !bytes.Equal(q.Data[:7], want) || len(q.Data) != 34 {
		t.Errorf("q8_0 % x, want % x...", q.Data[:7], want)
	}
	v, _ := gguf.Decode(q)
	if v[0] != 127 || v[1] != -64 || v[2] != 1 || v[4] != 0 {
		t.Errorf("q8_0 decodes to %v", v[:5])
	}
	if _, err := gguf.Encode("q", []uint64{16}, gguf.Q8_0, make([]float32, 16)); err == nil {
		t.Errorf("q8_0 of rows of 16 was encoded")
	}
}

// untrained returns a fresh model of cfg's shape.
func untrained(t *testing.T, pos string, edit func(*model.Config)) *model.Model {
	t.Helper()
	cfg := model.Config{Vocab: 256, DModel: 32, NLayers: 1, NHeads: 4, DFF: 64, Pos: pos, TrainLen: 16, Seed: 1}
	if edit != nil {
		edit(&cfg)
	}
	m, err := model.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The project's ALiBi slopes for every head count are llama.cpp's for a
// max bias of 8: written as such, they give the model's slopes.
func TestAlibiMaxBias(t *testing.T) {
	for _, heads := range []int{1, 2, 3, 4, 6, 8, 12, 16, 32} {
		m := untrained(t, model.PosALiBi, func(c *model.Config) { c.NHeads, c.DModel = heads, 8*heads })
		f, _, err := gguf.Build(gguf.Source{Model: m, Tokenizer: data.ByteTokenizer{}}, gguf.Options{})
		if err != nil {
			t.Fatalf("%d heads: %v", heads, err)
		}
		if v, _ := f.Lookup("mpt.attention.max_alibi_bias"); v != float32(8) {
			t.Errorf("%d heads: max_alibi_bias %v, want 8", heads, v)
		}
	}
}

// Models llama.cpp cannot compute exactly are refused, saying why.
func TestRefused(t *testing.T) {
	reversed := untrained(t, model.PosALiBi, nil)
	slices.Reverse(reversed.PositionBuffer)
	interp := untrained(t, model.PosALiBi, nil)
	if err := interp.Extend("interp", 4); err != nil {
		t.Fatal(err)
	}
	yarn := untrained(t, model.PosRoPE, nil)
	if err := yarn.Extend("yarn", 4); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		m    *model.Model
		want string
	}{
		{"t5", untrained(t, model.PosT5, nil), "scheme t5 has no counterpart in llama.cpp: T5's learned bucketed bias"},
		{"kerple", untrained(t, model.PosKerple, nil), "scheme kerple has no counterpart in llama.cpp: KERPLE's"},
		{"fire", untrained(t, model.PosFire, nil), "scheme fire has no counterpart in llama.cpp: FIRE's"},
		{"fox", untrained(t, "fox", nil), "scheme fox has no counterpart in llama.cpp: the Forgetting Transformer's forget gate"},
		{"log-length", untrained(t, model.PosALiBi, func(c *model.Config) { c.LogitScale = model.LogitScaleLogLength }), "log-length scaling"},
		{"slopes reversed", reversed, "are not llama.cpp's for any max bias"},
		{"interp", interp, "are not llama.cpp's for any max bias"},
		{"yarn", yarn, "llama.cpp's ramps linearly in the pair's index"},
	} {
		_, _, err := gguf.Build(gguf.Source{Model: c.m, Tokenizer: data.ByteTokenizer{}}, gguf.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line saying %q", c.name, err, c.want)
		}
	}
	if _, _, err := gguf.Build(gguf.Source{Model: untrained(t, model.PosALiBi, func(c *model.Config) { c.Vocab = 300 }), Tokenizer: data.ByteTokenizer{}}, gguf.Options{}); err == nil {
		t.Errorf("a tokenizer of another size than the model's vocabulary was accepted")
	}
}

// A Llama 3 pattern tokenizer without ignore_merges (which llama.cpp's
// llama-bpe applies) is refused when a token of its vocabulary is not what
// its merges make of the token's bytes: llama.cpp would encode that piece
// to another id.
func TestRefusedTokenizer(t *testing.T) {
	base, err := bpe.Train([]byte(strings.Repeat("the abc of it, 12 and 345. ", 50)), 270, bpe.TrainOptions{Pattern: bpe.Llama3})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := base.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if err := json.Unmarshal(buf.Bytes(), &file); err != nil {
		t.Fatal(err)
	}
	m := file["model"].(map[string]any)
	vocab := map[string]any{}
	for id := 0; id < 256; id++ {
		vocab[bpe.ByteLevelName([]byte{byte(id)})] = id
	}
	// "abc" is "ab" + "c", but "bc" (rank 0) is merged first.
	vocab["bc"], vocab["ab"], vocab["abc"] = 256, 257, 258
	m["vocab"], m["merges"], m["ignore_merges"] = vocab, []string{"b c", "a b", "ab c"}, false
	b, _ := json.Marshal(file)
	tok, err := bpe.ReadJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = gguf.Build(gguf.Source{Model: untrained(t, model.PosALiBi, func(c *model.Config) { c.Vocab = 259 }), Tokenizer: tok}, gguf.Options{})
	if err == nil || !strings.Contains(err.Error(), "llama.cpp would encode some texts to other ids") {
		t.Errorf("got %v", err)
	}
	// The trained one is exported: its merges make every token.
	if _, _, err := gguf.Build(gguf.Source{Model: untrained(t, model.PosALiBi, func(c *model.Config) { c.Vocab = 270 }), Tokenizer: base}, gguf.Options{}); err != nil {
		t.Errorf("a trained Llama 3 pattern tokenizer: %v", err)
	}
}

// ntk is written as the base it gives; pi as linear scaling of 1/F; the
// rotary layout as the whole head.
func TestRotaryMetadata(t *testing.T) {
	for _, c := range []struct {
		ext  string
		base float64
	}{{"", 10000}, {"pi", 10000}, {"ntk", 10000 * math.Pow(4, 8.0/6)}} {
		m := untrained(t, model.PosRoPE, nil) // d_head 8
		if c.ext != "" {
			if err := m.Extend(c.ext, 4); err != nil {
				t.Fatal(err)
			}
		}
		f, s, err := gguf.Build(gguf.Source{Model: m, Tokenizer: data.ByteTokenizer{}}, gguf.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := f.Lookup("gptneox.rope.freq_base"); v != float32(c.base) {
			t.Errorf("%s: base %v, want %v", c.ext, v, float32(c.base))
		}
		if v, _ := f.Lookup("gptneox.rope.dimension_count"); v != uint32(8) {
			t.Errorf("%s: rotary dimensions %v", c.ext, v)
		}
		st, _ := f.Lookup("gptneox.rope.scaling.type")
		if (c.ext == "pi") != (st == "linear") {
			t.Errorf("%s: scaling %v", c.ext, st)
		}
		if c.ext != "" && s.Context != 64 {
			t.Errorf("%s x4: context %d, want 4 x 16", c.ext, s.Context)
		}
	}
}

package eval

import (
	"math"
	"strings"
	"testing"
)

// Compare gives each length its bits per byte over seeds and its context
// in bytes; a result without Bytes (an older report's, byte-level) counts
// a byte a token.
func TestCompareBitsPerByte(t *testing.T) {
	bpe := func(seed uint64, bpb1, bpb2 float64) TrainedRun {
		return TrainedRun{Pos: "alibi", Seed: seed, TrainLen: 100, Results: []Result{
			{Len: 100, PPL: 9, BitsPerByte: bpb1, Tokens: 1000, Bytes: 3000},
			{Len: 200, PPL: 8, BitsPerByte: bpb2, Tokens: 1000, Bytes: 3000}}}
	}
	c := Compare([]TrainedRun{bpe(1, 1.5, 1.4), bpe(2, 1.7, 1.2),
		{Pos: "rope", Seed: 1, TrainLen: 100, Results: []Result{{Len: 100, PPL: 4, BitsPerByte: 2}}}})
	a := c.Schemes[0].Lengths
	if a[0].ContextBytes != 300 || a[1].ContextBytes != 600 || math.Abs(a[0].MeanBPB-1.6) > 1e-12 || a[0].MinBPB != 1.5 || a[0].MaxBPB != 1.7 ||
		math.Abs(a[1].MeanBPB-1.3) > 1e-12 {
		t.Errorf("alibi: %+v", a)
	}
	if r := c.Schemes[1].Lengths[0]; r.ContextBytes != 100 || r.MeanBPB != 2 {
		t.Errorf("rope, without bytes: %+v", r)
	}
}

// The bits-per-byte table names each length in tokens and bytes, and sets
// beside each shared scheme the other experiment's value at the same bytes,
// interpolated in log bytes between its lengths around them.
func TestBitsPerByteMarkdownBeside(t *testing.T) {
	c := Compare([]TrainedRun{{Pos: "alibi", Seed: 1, TrainLen: 100, Results: []Result{
		{Len: 100, BitsPerByte: 1.5, Tokens: 10, Bytes: 30}, {Len: 400, BitsPerByte: 1.25, Tokens: 10, Bytes: 30}}},
		{Pos: "fox", Seed: 1, TrainLen: 100, Results: []Result{
			{Len: 100, BitsPerByte: 1.4, Tokens: 10, Bytes: 30}, {Len: 400, BitsPerByte: 1.2, Tokens: 10, Bytes: 30}}}})
	// Byte-level: 2.0 at 150 bytes, 1.0 at 600, 0.5 at 2400.
	beside := Compare([]TrainedRun{{Pos: "alibi", Seed: 1, TrainLen: 150, Results: []Result{
		{Len: 150, BitsPerByte: 2}, {Len: 600, BitsPerByte: 1}, {Len: 2400, BitsPerByte: 0.5}}}})
	var b strings.Builder
	if err := c.BitsPerByteMarkdown(&b, &beside, "bytes.json"); err != nil {
		t.Fatal(err)
	}
	// 300 bytes is half-way from 150 to 600 in log bytes: 1.5; 1200 bytes
	// half-way from 600 to 2400: 0.75.
	want := "| eval length (bytes of context): bits per byte | alibi | alibi, bytes.json at equal bytes | fox |\n|---|---|---|---|\n" +
		"| 100 (300 bytes) | 1.5000 | 1.5000 | 1.4000 |\n" +
		"| 400 (1200 bytes) | 1.2500 | 0.7500 | 1.2000 |\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if v, ok := beside.Schemes[0].bitsPerByteAt(100); ok {
		t.Errorf("100 bytes, below the shortest length, gave %v", v)
	}
	if v, ok := beside.Schemes[0].bitsPerByteAt(600); !ok || v != 1 {
		t.Errorf("at an evaluated length: %v, %v", v, ok)
	}
}

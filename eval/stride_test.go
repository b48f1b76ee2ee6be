package eval

import (
	"strings"
	"testing"
)

func TestParseStrides(t *testing.T) {
	specs, err := ParseStrides("1, 1/2,1/8,1tok")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		text   string
		at512  int
		at8    int
		at1024 int
	}{{"1", 0, 0, 0}, {"1/2", 256, 4, 512}, {"1/8", 64, 1, 128}, {"1tok", 1, 1, 1}}
	if len(specs) != len(want) {
		t.Fatalf("%d specs, want %d", len(specs), len(want))
	}
	for i, w := range want {
		s := specs[i]
		if s.String() != w.text || s.Stride(512) != w.at512 || s.Stride(8) != w.at8 || s.Stride(1024) != w.at1024 {
			t.Errorf("spec %d: %s strides %d, %d, %d; want %s %d, %d, %d", i, s, s.Stride(512), s.Stride(8), s.Stride(1024), w.text, w.at512, w.at8, w.at1024)
		}
	}
	if s, _ := ParseStrides("1/16"); s[0].Stride(8) != 1 {
		t.Errorf("1/16 of 8 is %d tokens, want at least 1", s[0].Stride(8))
	}
	for _, c := range []struct{ in, want string }{
		{"2", `stride "2": want 1 (non-overlapping)`},
		{"1/1", `stride "1/1": want 1/k with an integer k of at least 2`},
		{"1/x", `stride "1/x"`},
		{"", `stride ""`},
		{"1,1tok,1", "stride 1 is listed twice"},
		{"1/4,1/4", "stride 1/4 is listed twice"},
	} {
		if _, err := ParseStrides(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseStrides(%q): %v, want %q", c.in, err, c.want)
		}
	}
}

// The dashed curve of the sweep plot takes the shortest sliding stride of
// each length: with strides 1/2 and 1/8 alone, every length has a point.
func TestShortestSliding(t *testing.T) {
	var rs []Result
	for _, l := range []int{128, 256, 512} {
		rs = append(rs, Result{Len: l, Protocol: NonOverlap})
		for _, k := range []int{2, 8} {
			rs = append(rs, Result{Len: l, Protocol: Sliding, Stride: l / k})
		}
	}
	got := shortestSliding(rs)
	if len(got) != 3 {
		t.Fatalf("%d points, want 3: %+v", len(got), got)
	}
	for i, l := range []int{128, 256, 512} {
		if got[i].Len != l || got[i].Stride != l/8 {
			t.Errorf("point %d: length %d stride %d, want %d and %d", i, got[i].Len, got[i].Stride, l, l/8)
		}
	}
}

// The speed table lists every sliding evaluation, by length and then from
// the longest stride down, with its scored tokens/s and wall time.
func TestSweepSpeedMarkdown(t *testing.T) {
	r := Report{Runs: []RunReport{{Pos: "alibi", Results: []Result{
		{Len: 128, Protocol: NonOverlap, TokensPerSecond: 50000},
		{Len: 128, Protocol: Sliding, Stride: 1, TokensPerSecond: 250, WallSeconds: 32.5},
		{Len: 128, Protocol: Sliding, Stride: 64, TokensPerSecond: 30000, WallSeconds: 0.3},
	}}}}
	var b strings.Builder
	if err := r.SweepSpeedMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	want := "| eval length (tokens) | stride | alibi |\n|---|---|---|\n| 128 | 64 | 30000 (0.3 s) |\n| 128 | 1 | 250 (32.5 s) |\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

package simd

import "testing"

func TestBest(t *testing.T) {
	top := best("")
	if !top.Supported() || !Portable.Supported() {
		t.Fatalf("best path %v unsupported", top)
	}
	for _, p := range Paths {
		if p > top && p.Supported() {
			t.Errorf("%v is supported but best is %v", p, top)
		}
		want := p
		if !p.Supported() {
			want = top
		}
		if got := best(p.String()); got != want {
			t.Errorf("ALIBI_SIMD=%s gives %v, want %v", p, got, want)
		}
	}
	if got := best("sse9"); got != top {
		t.Errorf("an unknown name gives %v, want %v", got, top)
	}
}

package eval

import (
	"errors"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/model"
)

// An estimate is admitted up to 80% of the limit, not up to the limit: the
// 22.2 GB estimate against 22.8 GB available that once ran for 10 minutes
// without output is refused.
func TestFitsMemory(t *testing.T) {
	const gb = 1 << 30
	for _, tc := range []struct {
		name        string
		need, limit int64
		want        bool
	}{
		{"80% of the limit", 80, 100, true},
		{"just over 80%", 81, 100, false},
		{"97% of the limit", 97, 100, false},
		{"the limit itself", 100, 100, false},
		{"22.2 GB of 22.8 GB", 222 * gb / 10, 228 * gb / 10, false},
		{"18 GB of 22.8 GB", 18 * gb, 228 * gb / 10, true},
		{"no limit known", 1 << 40, 0, true},
	} {
		if got := FitsMemory(tc.need, tc.limit); got != tc.want {
			t.Errorf("%s: FitsMemory(%d, %d) = %v, want %v", tc.name, tc.need, tc.limit, got, tc.want)
		}
	}
}

// CheckMemory and Perplexity refuse, with a MemoryError that states the
// margin, an evaluation whose estimate is 97% of the limit, and admit one
// whose estimate is 80% of it.
func TestCheckMemoryKeepsAMargin(t *testing.T) {
	m := testModel(t, model.PosALiBi)
	toks := stream(65)
	o := Options{Len: 16}
	need := EstimateBytes(m, len(toks), o)
	o.MemoryLimit = need * 100 / 97
	err := CheckMemory(m, len(toks), o)
	var me *MemoryError
	if !errors.As(err, &me) || me.Need != need || me.Limit != o.MemoryLimit || me.Len != 16 || me.Batch != 4 {
		t.Fatalf("estimate of 97%% of the limit: error %v (%+v), want a MemoryError", err, me)
	}
	if !strings.Contains(err.Error(), "of which an evaluation may take 80%") {
		t.Errorf("the error does not state the margin: %q", err)
	}
	if _, err := Perplexity(m, toks, o); !errors.As(err, &me) {
		t.Errorf("Perplexity at 97%% of the limit: error %v, want a MemoryError", err)
	}
	o.MemoryLimit = (need/80 + 1) * 100 // need is 80% of it, to 100 bytes
	if err := CheckMemory(m, len(toks), o); err != nil {
		t.Errorf("estimate %d under a limit of %d (80%%: %d): %v", need, o.MemoryLimit, admitted(o.MemoryLimit), err)
	}
	if _, err := Perplexity(m, toks, o); err != nil {
		t.Errorf("Perplexity within 80%% of the limit: %v", err)
	}
}

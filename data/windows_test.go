package data

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// checkCoverage verifies that ws lie inside a stream of n tokens and score
// every target 1..n-1 exactly once.
func checkCoverage(t *testing.T, ws []Window, n int) {
	t.Helper()
	count := make([]int, n)
	for i, w := range ws {
		if w.Start < 0 || w.Len < 1 || w.Score < 1 || w.Score > w.Len || w.Start+w.Len+1 > n {
			t.Fatalf("window %d %+v invalid for n=%d", i, w, n)
		}
		for pos := w.Len - w.Score; pos < w.Len; pos++ {
			count[w.Start+pos+1]++
		}
	}
	if count[0] != 0 {
		t.Errorf("token 0 scored %d times", count[0])
	}
	for tgt := 1; tgt < n; tgt++ {
		if count[tgt] != 1 {
			t.Fatalf("target %d scored %d times, want 1 (windows %v)", tgt, count[tgt], ws)
		}
	}
}

func TestNonOverlapWindows(t *testing.T) {
	tests := []struct {
		n, length int
		want      []Window
	}{
		{2, 5, []Window{{0, 1, 1}}},
		{6, 5, []Window{{0, 5, 5}}},
		{7, 5, []Window{{0, 5, 5}, {5, 1, 1}}},
		{11, 5, []Window{{0, 5, 5}, {5, 5, 5}}},
		{12, 5, []Window{{0, 5, 5}, {5, 5, 5}, {10, 1, 1}}},
		{14, 5, []Window{{0, 5, 5}, {5, 5, 5}, {10, 3, 3}}},
		{5, 1, []Window{{0, 1, 1}, {1, 1, 1}, {2, 1, 1}, {3, 1, 1}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("n=%d,len=%d", tt.n, tt.length), func(t *testing.T) {
			got, err := NonOverlapWindows(tt.n, tt.length)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			checkCoverage(t, got, tt.n)
		})
	}
}

func TestSlidingWindows(t *testing.T) {
	tests := []struct {
		n, length, stride int
		want              []Window
	}{
		{2, 4, 2, []Window{{0, 1, 1}}},
		{5, 4, 2, []Window{{0, 4, 4}}},
		{4, 4, 4, []Window{{0, 3, 3}}},
		{6, 4, 2, []Window{{0, 4, 4}, {1, 4, 1}}},
		{11, 4, 2, []Window{{0, 4, 4}, {2, 4, 2}, {4, 4, 2}, {6, 4, 2}}},
		{12, 4, 3, []Window{{0, 4, 4}, {3, 4, 3}, {6, 4, 3}, {7, 4, 1}}},
		{9, 4, 1, []Window{{0, 4, 4}, {1, 4, 1}, {2, 4, 1}, {3, 4, 1}, {4, 4, 1}}},
		{11, 5, 5, []Window{{0, 5, 5}, {5, 5, 5}}},
		{13, 5, 5, []Window{{0, 5, 5}, {5, 5, 5}, {7, 5, 2}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("n=%d,len=%d,stride=%d", tt.n, tt.length, tt.stride), func(t *testing.T) {
			got, err := SlidingWindows(tt.n, tt.length, tt.stride)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			checkCoverage(t, got, tt.n)
		})
	}
}

// TestWindowCoverageSweep checks both protocols over many sizes, including
// lengths that do and do not divide n-1, and the window counts.
func TestWindowCoverageSweep(t *testing.T) {
	for n := 2; n <= 60; n++ {
		p := n - 1
		for length := 1; length <= 20; length++ {
			no, err := NonOverlapWindows(n, length)
			if err != nil {
				t.Fatal(err)
			}
			checkCoverage(t, no, n)
			if want := (p + length - 1) / length; len(no) != want {
				t.Fatalf("NonOverlap(n=%d,len=%d): %d windows, want %d", n, length, len(no), want)
			}
			for stride := 1; stride <= length; stride++ {
				sl, err := SlidingWindows(n, length, stride)
				if err != nil {
					t.Fatal(err)
				}
				checkCoverage(t, sl, n)
				want := 1
				if p > length {
					want += (p - length + stride - 1) / stride
				}
				if len(sl) != want {
					t.Fatalf("Sliding(n=%d,len=%d,stride=%d): %d windows, want %d", n, length, stride, len(sl), want)
				}
				for i, w := range sl {
					if i > 0 && (w.Len != length || w.Len-w.Score < length-stride || w.Score > stride) {
						t.Fatalf("Sliding(n=%d,len=%d,stride=%d): window %d %+v scores targets with less than %d context",
							n, length, stride, i, w, length-stride)
					}
				}
			}
		}
	}
}

// TestSlidingStrideEqualsLength checks that sliding windows with stride ==
// length are the non-overlapping windows on all full windows, and that the
// tail (if any) scores the same targets.
func TestSlidingStrideEqualsLength(t *testing.T) {
	for n := 2; n <= 80; n++ {
		for length := 1; length <= 12; length++ {
			no, _ := NonOverlapWindows(n, length)
			sl, err := SlidingWindows(n, length, length)
			if err != nil {
				t.Fatal(err)
			}
			if len(no) != len(sl) {
				t.Fatalf("n=%d len=%d: %d non-overlap vs %d sliding windows", n, length, len(no), len(sl))
			}
			for i := range no {
				a, b := no[i], sl[i]
				if a.Len == length {
					if a != b {
						t.Fatalf("n=%d len=%d: full window %d differs: %+v vs %+v", n, length, i, a, b)
					}
					continue
				}
				// Tail: same scored targets, possibly with more context.
				if a.Start+a.Len != b.Start+b.Len || a.Score != b.Score {
					t.Fatalf("n=%d len=%d: tail window %+v vs %+v score different targets", n, length, a, b)
				}
			}
			if (n-1)%length == 0 && !slices.Equal(no, sl) {
				t.Fatalf("n=%d len=%d divides: %v vs %v", n, length, no, sl)
			}
		}
	}
}

func TestWindowErrors(t *testing.T) {
	tests := []struct {
		name              string
		n, length, stride int
		sliding           bool
		want              string
	}{
		{"nonoverlap n=1", 1, 4, 0, false, "1 tokens"},
		{"nonoverlap n=0", 0, 4, 0, false, "0 tokens"},
		{"nonoverlap length 0", 10, 0, 0, false, "length 0"},
		{"sliding n=1", 1, 4, 2, true, "1 tokens"},
		{"sliding length -1", 10, -1, 1, true, "length -1"},
		{"sliding stride 0", 10, 4, 0, true, "stride 0"},
		{"sliding stride > length", 10, 4, 5, true, "stride 5 exceeds window length 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.sliding {
				_, err = SlidingWindows(tt.n, tt.length, tt.stride)
			} else {
				_, err = NonOverlapWindows(tt.n, tt.length)
			}
			if err == nil {
				t.Fatal("want error")
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line containing %q", err, tt.want)
			}
		})
	}
}

func ExampleNonOverlapWindows() {
	// 12 tokens give 11 targets; windows of 5 leave a tail of 1.
	ws, err := NonOverlapWindows(12, 5)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range ws {
		fmt.Printf("read [%d,%d) score last %d\n", w.Start, w.Start+w.Len, w.Score)
	}
	// Output:
	// read [0,5) score last 5
	// read [5,10) score last 5
	// read [10,11) score last 1
}

package data

import (
	"math"
	"slices"
	"testing"
)

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestSplitSizes(t *testing.T) {
	tests := []struct {
		n         int
		valFrac   float64
		wantTrain int
	}{
		{10, 0.1, 9},
		{100, 0.1, 90},
		{101, 0.1, 90},
		{19, 0.1, 17},
		{3, 0.5, 1},
		{7, 0.25, 5},
		{5, 0, 5},
		{1000, 0.2, 800},
	}
	for _, tt := range tests {
		tokens := seq(tt.n)
		train, val, err := Split(tokens, tt.valFrac)
		if err != nil {
			t.Fatalf("Split(n=%d, %v): %v", tt.n, tt.valFrac, err)
		}
		if len(train) != tt.wantTrain || len(val) != tt.n-tt.wantTrain {
			t.Errorf("Split(n=%d, %v): train %d val %d, want %d %d",
				tt.n, tt.valFrac, len(train), len(val), tt.wantTrain, tt.n-tt.wantTrain)
		}
		if !slices.Equal(append(slices.Clone(train), val...), tokens) {
			t.Errorf("Split(n=%d, %v): train+val is not the input in order", tt.n, tt.valFrac)
		}
	}
}

// TestSplitMatchesPython checks that the split point equals Python's
// int(len(data) * 0.9), that is int(float64(n) * 0.9).
func TestSplitMatchesPython(t *testing.T) {
	text, err := DefaultCorpus()
	if err != nil {
		t.Fatal(err)
	}
	ns := []int{len(text), 2, 10, 11, 99, 1001, 65537, 1 << 20, 1234567}
	for n := 2; n <= 5000; n++ {
		ns = append(ns, n)
	}
	for _, n := range ns {
		want := int(float64(n) * 0.9)
		train, val, err := Split(make([]int, n), 0.1)
		if err != nil {
			t.Fatalf("Split(n=%d): %v", n, err)
		}
		if len(train) != want || len(val) != n-want {
			t.Fatalf("Split(n=%d, 0.1): train %d, want int(n*0.9) = %d", n, len(train), want)
		}
	}
	if got := int(float64(len(text)) * 0.9); got != 510478 {
		t.Errorf("Opticks train size = %d, want 510478", got)
	}
}

func TestSplitDoesNotAlias(t *testing.T) {
	tokens := seq(10)
	train, val, err := Split(tokens, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(train, -1)
	if val[0] != 7 {
		t.Errorf("appending to train overwrote val[0] = %d", val[0])
	}
}

func TestSplitErrors(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		valFrac float64
	}{
		{"negative fraction", 10, -0.1},
		{"fraction one", 10, 1},
		{"fraction above one", 10, 1.5},
		{"NaN", 10, math.NaN()},
		{"empty input", 0, 0.1},
		{"empty val", 5, 1e-17}, // 1-1e-17 == 1 in float64, so train would take all 5
		{"empty train", 2, 0.9}, // int(2*0.1) = 0
		{"single token", 1, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			train, val, err := Split(seq(tt.n), tt.valFrac)
			if err == nil {
				t.Fatalf("Split(n=%d, %v) = %d/%d, want error", tt.n, tt.valFrac, len(train), len(val))
			}
		})
	}
}

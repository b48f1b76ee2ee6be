package data

import "fmt"

// Window is one evaluation window over a token stream. The model reads
// tokens[Start:Start+Len] and predicts tokens[Start+1:Start+Len+1]; only the
// last Score predictions (positions Len-Score..Len-1 inside the window, that
// is stream targets Start+Len-Score+1..Start+Len) are counted.
type Window struct {
	Start, Len, Score int
}

// NonOverlapWindows splits the n-1 predictable targets of a stream of n
// tokens into consecutive non-overlapping windows of length tokens, each
// scored in full. Windows start at 0, length, 2*length, ...; a final shorter
// tail window has Len = Score = the number of remaining targets. Every target
// is scored exactly once.
//
// It returns an error if n < 2 or length < 1.
func NonOverlapWindows(n, length int) ([]Window, error) {
	if n < 2 {
		return nil, fmt.Errorf("windows: stream of %d tokens has no targets; need at least 2 tokens", n)
	}
	if length < 1 {
		return nil, fmt.Errorf("windows: window length %d must be at least 1", length)
	}
	p := n - 1
	ws := make([]Window, 0, (p+length-1)/length)
	for start := 0; start < p; start += length {
		l := min(length, p-start)
		ws = append(ws, Window{Start: start, Len: l, Score: l})
	}
	return ws, nil
}

// SlidingWindows covers the n-1 predictable targets of a stream of n tokens
// with windows of length tokens that advance by stride. The first window
// scores all its predictions; each later window ends stride targets further
// (or at the end of the stream) and scores only its last, new predictions, so
// every target is scored exactly once and every scored prediction after the
// first window sees at least length-stride tokens of context. If the stream
// has at most length targets, one window of n-1 tokens covers it.
//
// It returns an error if n < 2, length < 1, stride < 1 or stride > length.
func SlidingWindows(n, length, stride int) ([]Window, error) {
	if n < 2 {
		return nil, fmt.Errorf("windows: stream of %d tokens has no targets; need at least 2 tokens", n)
	}
	if length < 1 {
		return nil, fmt.Errorf("windows: window length %d must be at least 1", length)
	}
	if stride < 1 {
		return nil, fmt.Errorf("windows: stride %d must be at least 1", stride)
	}
	if stride > length {
		return nil, fmt.Errorf("windows: stride %d exceeds window length %d", stride, length)
	}
	p := n - 1
	if p <= length {
		return []Window{{Start: 0, Len: p, Score: p}}, nil
	}
	ws := make([]Window, 0, 1+(p-length+stride-1)/stride)
	ws = append(ws, Window{Start: 0, Len: length, Score: length})
	for e := length; e < p; {
		e2 := min(e+stride, p)
		ws = append(ws, Window{Start: e2 - length, Len: length, Score: e2 - e})
		e = e2
	}
	return ws, nil
}

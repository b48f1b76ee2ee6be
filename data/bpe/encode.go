package bpe

import (
	"bytes"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

const (
	// parallelMin is the text length from which Encode spreads the work
	// over the processors.
	parallelMin = 256 << 10
	// chunkLen is about how much text one unit of parallel work has.
	chunkLen = 128 << 10
	// cacheMaxPiece and cacheMaxEntries bound the cache of encoded pieces.
	cacheMaxPiece   = 64
	cacheMaxEntries = 1 << 16
	// quadraticMax is the longest piece merged by scanning all its pairs at
	// each step; longer ones use a heap.
	quadraticMax = 128
)

// noMerge is the rank of a pair without a merge.
const noMerge = math.MaxUint32

// Encode returns the ids of text. Any bytes encode, and [Tokenizer.Decode]
// gives them back. Long texts are encoded in parallel, in pieces cut where
// the pattern is sure to cut, so the ids do not depend on the number of
// processors.
func (t *Tokenizer) Encode(text []byte) []uint32 {
	units := t.units(text)
	if len(text) < parallelMin || len(units) == 1 || runtime.GOMAXPROCS(0) == 1 {
		e := t.encoder()
		defer t.encoders.Put(e)
		out := make([]uint32, 0, len(text)/3+16)
		for _, u := range units {
			out = e.unit(text, u, out)
		}
		return out
	}
	parts := make([][]uint32, len(units))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(units)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := t.encoder()
			defer t.encoders.Put(e)
			for {
				i := int(next.Add(1)) - 1
				if i >= len(units) {
					return
				}
				u := units[i]
				parts[i] = e.unit(text, u, make([]uint32, 0, (u.end-u.start)/3+16))
			}
		}()
	}
	wg.Wait()
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]uint32, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// units cuts text at its added tokens, and long stretches between them
// into chunks of about chunkLen.
func (t *Tokenizer) units(text []byte) []span {
	var out []span
	for _, s := range t.spans(text) {
		if s.added {
			out = append(out, s)
			continue
		}
		for s.end-s.start > 2*chunkLen {
			cut := safeCut(text[:s.end], s.start+chunkLen)
			if cut < 0 {
				break
			}
			out = append(out, span{start: s.start, end: cut, limit: s.limit})
			s.start = cut
		}
		out = append(out, s)
	}
	return out
}

// safeCut returns the first position p from from on where every pattern is
// sure to start a piece, or -1: just after a newline and at an ASCII letter.
// No piece of either pattern runs from a newline into a letter, and the
// pieces from a piece's start on do not depend on the text before it. (They
// do depend on the text after: the pieces before p must be split with the
// text after p in view.)
func safeCut(text []byte, from int) int {
	for from < len(text) {
		i := bytes.IndexByte(text[from:], '\n')
		if i < 0 {
			return -1
		}
		p := from + i + 1
		if p < len(text) {
			if c := text[p] | 0x20; 'a' <= c && c <= 'z' {
				return p
			}
		}
		from = p
	}
	return -1
}

// encoder holds what one goroutine's encoding reuses: its cache of pieces'
// ids (which only ever holds what merging gives, so it changes no result)
// and its buffers.
type encoder struct {
	t     *Tokenizer
	cache map[string][]uint32
	pairs []merge
	heap  pairHeap
	prev  []int32
	next  []int32
}

func newEncoder(t *Tokenizer) *encoder {
	return &encoder{t: t, cache: make(map[string][]uint32)}
}

// encoder takes an encoder from the pool, or makes one.
func (t *Tokenizer) encoder() *encoder {
	if e, ok := t.encoders.Get().(*encoder); ok {
		return e
	}
	return newEncoder(t)
}

// unit appends the ids of text[u.start:u.end] to out.
func (e *encoder) unit(text []byte, u span, out []uint32) []uint32 {
	if u.added {
		return append(out, u.id)
	}
	s := text[:u.limit]
	for i := u.start; i < u.end; {
		j := e.t.pattern.end(s, i)
		out = e.piece(s[i:j], out)
		i = j
	}
	return out
}

// piece appends the ids of one piece to out.
func (e *encoder) piece(p []byte, out []uint32) []uint32 {
	t := e.t
	if len(p) == 1 {
		return append(out, t.byteID[p[0]])
	}
	if t.whole != nil {
		if id, ok := t.whole[string(p)]; ok {
			return append(out, id)
		}
	}
	cacheable := len(p) <= cacheMaxPiece
	if cacheable {
		if ids, ok := e.cache[string(p)]; ok {
			return append(out, ids...)
		}
	}
	start := len(out)
	for _, b := range p {
		out = append(out, t.byteID[b])
	}
	var merged []uint32
	if len(p) <= quadraticMax {
		merged = e.mergeScan(out[start:])
	} else {
		merged = e.mergeHeap(out[start:])
	}
	out = out[:start+len(merged)]
	if cacheable {
		if len(e.cache) >= cacheMaxEntries {
			clear(e.cache)
		}
		e.cache[string(p)] = append([]uint32(nil), merged...)
	}
	return out
}

// lookup returns the merge of a pair, or one of rank noMerge.
func (t *Tokenizer) lookup(left, right uint32) merge {
	if m, ok := t.rank[pairKey(left, right)]; ok {
		return m
	}
	return merge{rank: noMerge}
}

// mergeScan merges sym in place, the pair of lowest rank first (the
// leftmost among equals), by scanning the pairs at each step, and returns
// the merged symbols.
func (e *encoder) mergeScan(sym []uint32) []uint32 {
	t := e.t
	pairs := e.pairs[:0]
	for k := 0; k+1 < len(sym); k++ {
		pairs = append(pairs, t.lookup(sym[k], sym[k+1]))
	}
	for len(pairs) > 0 {
		best, rank := -1, uint32(noMerge)
		for k, m := range pairs {
			if m.rank < rank {
				best, rank = k, m.rank
			}
		}
		if best < 0 {
			break
		}
		sym[best] = pairs[best].result
		sym = append(sym[:best+1], sym[best+2:]...)
		pairs = append(pairs[:best], pairs[best+1:]...)
		if best > 0 {
			pairs[best-1] = t.lookup(sym[best-1], sym[best])
		}
		if best < len(pairs) {
			pairs[best] = t.lookup(sym[best], sym[best+1])
		}
	}
	e.pairs = pairs
	return sym
}

// mergeHeap merges sym in place as mergeScan does, with the symbols in a
// linked list and the pairs in a heap ordered by rank, then position.
func (e *encoder) mergeHeap(sym []uint32) []uint32 {
	t := e.t
	n := len(sym)
	prev, next := e.prev[:0], e.next[:0]
	for k := 0; k < n; k++ {
		prev = append(prev, int32(k-1))
		next = append(next, int32(k+1))
	}
	next[n-1] = -1
	h := e.heap[:0]
	for k := 0; k+1 < n; k++ {
		if m := t.lookup(sym[k], sym[k+1]); m.rank != noMerge {
			h = append(h, heapEntry{rank: m.rank, pos: int32(k)})
		}
	}
	h.init()
	alive := func(k int32) bool { return k >= 0 && prev[k] != -2 }
	for len(h) > 0 {
		top := h.pop()
		k := top.pos
		if !alive(k) || next[k] < 0 {
			continue
		}
		r := next[k]
		m := t.lookup(sym[k], sym[r])
		if m.rank != top.rank { // the pair changed since it was pushed
			continue
		}
		sym[k] = m.result
		next[k] = next[r]
		if next[r] >= 0 {
			prev[next[r]] = k
		}
		prev[r] = -2 // dead
		if p := prev[k]; p >= 0 {
			if pm := t.lookup(sym[p], sym[k]); pm.rank != noMerge {
				h.push(heapEntry{rank: pm.rank, pos: p})
			}
		}
		if q := next[k]; q >= 0 {
			if qm := t.lookup(sym[k], sym[q]); qm.rank != noMerge {
				h.push(heapEntry{rank: qm.rank, pos: k})
			}
		}
	}
	out := sym[:0]
	for k := int32(0); k >= 0; k = next[k] {
		out = append(out, sym[k])
	}
	e.prev, e.next, e.heap = prev, next, h
	return out
}

// heapEntry is a pair in the heap: its rank and its left symbol's position.
type heapEntry struct {
	rank uint32
	pos  int32
}

// pairHeap is a binary min-heap of pairs by rank, then position.
type pairHeap []heapEntry

func (a heapEntry) less(b heapEntry) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos)
}

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(e heapEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *pairHeap) pop() heapEntry {
	s := *h
	top := s[0]
	s[0] = s[len(s)-1]
	*h = s[:len(s)-1]
	h.down(0)
	return top
}

func (h pairHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].less(h[l]) {
			m = r
		}
		if !h[m].less(h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// MergesMakeEveryToken reports whether every token of the model's
// vocabulary is what the merges make of its own bytes. Then taking a piece
// that is a token whole, before any merge (ignore_merges), gives the ids
// the merges give: the tokenizer encodes every text alike with
// ignore_merges and without it.
func (t *Tokenizer) MergesMakeEveryToken() bool {
	e := newEncoder(t)
	var sym []uint32
	for id, b := range t.tokens {
		if b == nil || !t.inModel[id] || len(b) == 1 {
			continue
		}
		sym = sym[:0]
		for _, c := range b {
			sym = append(sym, t.byteID[c])
		}
		var merged []uint32
		if len(b) <= quadraticMax {
			merged = e.mergeScan(sym)
		} else {
			merged = e.mergeHeap(sym)
		}
		if len(merged) != 1 || merged[0] != uint32(id) {
			return false
		}
	}
	return true
}

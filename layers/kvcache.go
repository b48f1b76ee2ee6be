package layers

import "fmt"

// Positions are the absolute positions of a batch of sequences that are
// decoded incrementally: sequence b has Len[b] tokens behind it, so its next
// tokens stand at positions Len[b], Len[b]+1, ... Every cache of a model
// shares one Positions, which the decoder advances after each step.
type Positions struct {
	Len []int
}

// NewPositions returns the positions of batch empty sequences.
func NewPositions(batch int) *Positions { return &Positions{Len: make([]int, batch)} }

// Advance records that every sequence took n more tokens.
func (p *Positions) Advance(n int) {
	for b := range p.Len {
		p.Len[b] += n
	}
}

// KVCache holds the keys and values that one attention layer computed for
// each sequence of a batch, so that attending from new tokens reuses them
// instead of recomputing the past. Row t of sequence b holds the key (or
// value) of its token at position t, d = heads*d_head floats. Storage grows
// by doubling, with no limit but memory.
type KVCache struct {
	pos  *Positions
	d    int
	k, v [][]float32
}

// NewKVCache returns an empty cache of rows of width d (the model width)
// for the sequences of pos.
func NewKVCache(pos *Positions, d int) *KVCache {
	return &KVCache{pos: pos, d: d, k: make([][]float32, len(pos.Len)), v: make([][]float32, len(pos.Len))}
}

// Len is the number of tokens cached for sequence b.
func (c *KVCache) Len(b int) int { return c.pos.Len[b] }

// Bytes is the memory the cache holds.
func (c *KVCache) Bytes() int {
	n := 0
	for b := range c.k {
		n += 4 * (cap(c.k[b]) + cap(c.v[b]))
	}
	return n
}

// store copies the keys and values of qLen new rows per sequence from qkv
// (batch*qLen rows of width 3d, as the attention op receives them) into the
// cache after each sequence's cached rows, and returns the kernel's views:
// the new queries against every cached key and value, the output rows in
// out. The positions are not advanced: the decoder does it once every
// layer has run.
func (c *KVCache) store(qkv, out []float32, qLen int) ([]flashSeq[float32], error) {
	batch := len(c.pos.Len)
	if len(qkv) != batch*qLen*3*c.d {
		return nil, fmt.Errorf("attention cache: %d values are not %d sequences of %d rows of width 3 x %d", len(qkv), batch, qLen, c.d)
	}
	seqs := make([]flashSeq[float32], batch)
	d := c.d
	for b := range seqs {
		n := c.pos.Len[b]
		c.k[b], c.v[b] = grow(c.k[b], (n+qLen)*d), grow(c.v[b], (n+qLen)*d)
		rows := qkv[b*qLen*3*d:]
		for i := 0; i < qLen; i++ {
			copy(c.k[b][(n+i)*d:(n+i+1)*d], rows[i*3*d+d:i*3*d+2*d])
			copy(c.v[b][(n+i)*d:(n+i+1)*d], rows[i*3*d+2*d:i*3*d+3*d])
		}
		seqs[b] = flashSeq[float32]{q: rows, k: c.k[b], v: c.v[b], o: out[b*qLen*d:],
			ldq: 3 * d, ldk: d, ldv: d, ldo: d, offset: n}
	}
	return seqs, nil
}

// grow returns s with length n, doubling its capacity (and copying) when it
// is too small.
func grow(s []float32, n int) []float32 {
	if n <= cap(s) {
		return s[:n]
	}
	g := make([]float32, n, max(n, 2*cap(s)))
	copy(g, s)
	return g
}

package layers

import "fmt"

// Positions are the absolute positions of a batch of sequences that are
// decoded incrementally: sequence b has Len[b] tokens behind it, so its next
// tokens stand at positions Len[b], Len[b]+1, ... A run of a decoding graph
// covers the selected sequences (all of them unless Select chose some), one
// batch row each, in order. Every cache of a model shares one Positions,
// which the decoder advances after each run.
type Positions struct {
	Len    []int
	active []int
}

// NewPositions returns the positions of batch empty sequences, all selected.
func NewPositions(batch int) *Positions {
	p := &Positions{Len: make([]int, batch)}
	p.SelectAll()
	return p
}

// Select makes the next runs cover the given sequences, in that order.
func (p *Positions) Select(seqs ...int) { p.active = append(p.active[:0], seqs...) }

// SelectAll makes the next runs cover every sequence.
func (p *Positions) SelectAll() {
	p.active = p.active[:0]
	for b := range p.Len {
		p.active = append(p.active, b)
	}
}

// Active returns the sequences the next run covers, in batch-row order.
func (p *Positions) Active() []int { return p.active }

// Offset is the position of batch row r's first new token.
func (p *Positions) Offset(r int) int { return p.Len[p.active[r]] }

// Advance records that every selected sequence took n more tokens.
func (p *Positions) Advance(n int) {
	for _, b := range p.active {
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

// Bytes is the memory the cache holds.
func (c *KVCache) Bytes() int {
	n := 0
	for b := range c.k {
		n += 4 * (cap(c.k[b]) + cap(c.v[b]))
	}
	return n
}

// store copies the keys and values of qLen new rows per selected sequence
// from qkv (one block of qLen rows of width 3d per batch row, as the
// attention op receives them) into the cache after the sequence's cached
// rows, and returns the kernel's views: the new queries against every
// cached key and value, the output rows in out. The positions are not
// advanced: the decoder does it once every layer has run.
func (c *KVCache) store(qkv, out []float32, qLen int) ([]flashSeq[float32], error) {
	active := c.pos.active
	d := c.d
	if len(qkv) != len(active)*qLen*3*d {
		return nil, fmt.Errorf("attention cache: %d values are not %d sequences of %d rows of width 3 x %d", len(qkv), len(active), qLen, d)
	}
	seqs := make([]flashSeq[float32], len(active))
	for r, b := range active {
		n := c.pos.Len[b]
		c.k[b], c.v[b] = grow(c.k[b], (n+qLen)*d), grow(c.v[b], (n+qLen)*d)
		rows := qkv[r*qLen*3*d:]
		for i := 0; i < qLen; i++ {
			copy(c.k[b][(n+i)*d:(n+i+1)*d], rows[i*3*d+d:i*3*d+2*d])
			copy(c.v[b][(n+i)*d:(n+i+1)*d], rows[i*3*d+2*d:i*3*d+3*d])
		}
		seqs[r] = flashSeq[float32]{q: rows, k: c.k[b], v: c.v[b], o: out[r*qLen*d:],
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

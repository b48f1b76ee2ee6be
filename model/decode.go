package model

import (
	"fmt"

	"github.com/alibi-go/alibi/layers"
	"github.com/alibi-go/alibi/layers/position"
)

// Cache is a model's key/value cache for a batch of sequences decoded
// incrementally: their positions and one cache per layer. A decoding graph
// (NewDecodeGraph) reads and extends it; Pos.Select chooses which
// sequences the next run covers.
type Cache struct {
	Positions *layers.Positions
	layers    []*layers.KVCache
}

// NewCache returns an empty cache for batch sequences.
func (m *Model) NewCache(batch int) *Cache {
	c := &Cache{Positions: layers.NewPositions(batch)}
	for l := 0; l < m.Config.NLayers; l++ {
		c.layers = append(c.layers, layers.NewKVCache(c.Positions, m.Config.NHeads, m.cacheWidth()))
	}
	return c
}

// cacheWidth is the width of the keys and values a layer's cache holds:
// d_model, or twice that for PoPE, whose kernel attends over heads of 2
// d_head.
func (m *Model) cacheWidth() int {
	if _, ok := m.scheme.(position.PolarScheme); ok {
		return 2 * m.Config.DModel
	}
	return m.Config.DModel
}

// Bytes is the memory the cache holds.
func (c *Cache) Bytes() int {
	n := 0
	for _, l := range c.layers {
		n += l.Bytes()
	}
	return n
}

// NewDecodeGraph builds a graph that runs q new tokens of each sequence
// selected in c when the graph is built (one batch row each, in order) at
// their absolute positions, against everything c holds for them: the same
// layers, weights and attention kernel as NewGraph, with the keys and values
// of earlier tokens read from the cache instead of recomputed. Execute
// stores the new tokens' keys and values and advances the positions. Runs
// must have the same number of selected sequences as the build.
func (m *Model) NewDecodeGraph(c *Cache, q int) (*Graph, error) {
	return m.build(len(c.Positions.Active()), q, buildOpts{cache: c})
}

// NewScoringDecodeGraph is NewDecodeGraph whose logits are those of the last
// scored of the q new tokens of each sequence only, (Batch*scored, Vocab),
// as NewScoringGraph: every new token's keys and values are still computed
// and stored, but the last layer's queries, its MLP and the head run on the
// scored rows alone. Prefilling a long prompt whose logits matter only at
// its end takes scored = 1 for every chunk but the last.
func (m *Model) NewScoringDecodeGraph(c *Cache, q, scored int) (*Graph, error) {
	if scored < 1 || scored > q {
		return nil, fmt.Errorf("graph: %d scored rows of %d new tokens", scored, q)
	}
	return m.build(len(c.Positions.Active()), q, buildOpts{cache: c, scored: scored})
}

// beforeDecode checks the selection and writes the embedding table's rows
// of the new tokens' positions (for a scheme that adds one).
func (gr *Graph) beforeDecode() error {
	pos := gr.cache.Positions
	if len(pos.Active()) != gr.Batch {
		return fmt.Errorf("graph run: %d sequences selected in the cache, the graph decodes %d", len(pos.Active()), gr.Batch)
	}
	if gr.pe == nil {
		return nil
	}
	d := gr.m.Config.DModel
	last := 0
	for r := range pos.Active() {
		last = max(last, pos.Offset(r)+gr.Len)
	}
	table := gr.m.decodeTable(last)
	for r := range pos.Active() {
		at := pos.Offset(r)
		copy(gr.pe[r*gr.Len*d:(r+1)*gr.Len*d], table[at*d:(at+gr.Len)*d])
	}
	return nil
}

// decodeTable returns the rows of the scheme's embedding table for at least n
// positions, grown by doubling when too short (row p does not depend on the
// table's length), so that decoding token after token rebuilds it a
// logarithmic number of times.
func (m *Model) decodeTable(n int) []float32 {
	if len(m.decodeRows) < n*m.Config.DModel {
		m.decodeRows = m.makeTable(max(n, 2*len(m.decodeRows)/m.Config.DModel), m.Config.DModel).Data().([]float32)
	}
	return m.decodeRows
}

// Reset empties the cache for reuse: every sequence is back at position 0
// with all sequences selected, and the storage already grown is kept, so a
// decoding graph built on the cache serves the next sequences too.
func (c *Cache) Reset() {
	for b := range c.Positions.Lengths {
		c.Positions.Lengths[b] = 0
	}
	c.Positions.SelectAll()
}

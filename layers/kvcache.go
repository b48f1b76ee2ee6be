package layers

import (
	"fmt"

	"github.com/alibi-go/alibi/layers/internal/flash"
)

// Positions are the absolute positions of a batch of sequences that are
// decoded incrementally: sequence b has Lengths[b] tokens behind it, so its next
// tokens stand at positions Lengths[b], Lengths[b]+1, ... A run of a decoding graph
// covers the selected sequences (all of them unless Select chose some), one
// batch row each, in order. Every cache of a model shares one Positions,
// which the decoder advances after each run.
type Positions struct {
	Lengths []int
	active  []int
}

// NewPositions returns the positions of batch empty sequences, all selected.
func NewPositions(batch int) *Positions {
	p := &Positions{Lengths: make([]int, batch)}
	p.SelectAll()
	return p
}

// Select makes the next runs cover the given sequences, in that order.
func (p *Positions) Select(seqs ...int) { p.active = append(p.active[:0], seqs...) }

// SelectAll makes the next runs cover every sequence.
func (p *Positions) SelectAll() {
	p.active = p.active[:0]
	for b := range p.Lengths {
		p.active = append(p.active, b)
	}
}

// Active returns the sequences the next run covers, in batch-row order.
func (p *Positions) Active() []int { return p.active }

// Offset is the position of batch row r's first new token.
func (p *Positions) Offset(r int) int { return p.Lengths[p.active[r]] }

// Advance records that every selected sequence took n more tokens.
func (p *Positions) Advance(n int) {
	for _, b := range p.active {
		p.Lengths[b] += n
	}
}

// KVCache holds the keys and values that one attention layer computed for
// each sequence of a batch, so that attending from new tokens reuses them
// instead of recomputing the past. They are stored head by head: for each
// sequence, one block per head holds the d_head floats of the key (or value)
// of every position in turn, so that attending one head from one new token
// reads a contiguous run of memory instead of a slice of every d-wide row.
// Storage grows by doubling, with no limit but memory.
type KVCache struct {
	pos          *Positions
	d            int // the model width: heads * dHead
	heads, dHead int
	k, v         [][]float32          // per sequence: heads blocks of rows[b] rows of dHead
	rows         []int                // the rows each of the sequence's blocks has room for
	seqs         []flash.Seq[float32] // store's result, reused
	// With dynamic rotary frequencies (RopeScaling.Dynamic): the keys
	// before rotation, laid out as k, and the factor whose frequencies
	// rotated each sequence's cached keys (rotateKeys). nil otherwise.
	raw   [][]float32
	rotOf []float64
	// With a forget gate (AttentionConfig.Gate): per sequence, the prefix
	// sums c of every cached position, heads a row (ForgetGate). nil
	// otherwise.
	gates [][]float32
}

// NewKVCache returns an empty cache of keys and values of width d (the
// model width) split into heads heads, for the sequences of pos.
func NewKVCache(pos *Positions, heads, d int) *KVCache {
	if heads < 1 || d%heads != 0 {
		panic(fmt.Sprintf("layers: a cache of width %d cannot hold %d heads", d, heads))
	}
	n := len(pos.Lengths)
	return &KVCache{pos: pos, d: d, heads: heads, dHead: d / heads,
		k: make([][]float32, n), v: make([][]float32, n), rows: make([]int, n)}
}

// Bytes is the memory the cache holds.
func (c *KVCache) Bytes() int {
	n := 0
	for b := range c.k {
		n += 4 * (cap(c.k[b]) + cap(c.v[b]))
	}
	for _, r := range c.raw {
		n += 4 * cap(r)
	}
	for _, g := range c.gates {
		n += 4 * cap(g)
	}
	return n
}

// reserve makes room for need rows in sequence b's blocks, which hold n
// rows, doubling their capacity (and moving every head's rows) when it is
// too small.
func (c *KVCache) reserve(b, n, need int) {
	old := c.rows[b]
	if need <= old {
		return
	}
	rows := max(need, 2*old)
	hs, dh := rows*c.dHead, c.dHead
	k, v := make([]float32, c.heads*hs), make([]float32, c.heads*hs)
	for h := 0; h < c.heads; h++ {
		copy(k[h*hs:h*hs+n*dh], c.k[b][h*old*dh:])
		copy(v[h*hs:h*hs+n*dh], c.v[b][h*old*dh:])
	}
	if c.gates != nil {
		g := make([]float32, rows*c.heads)
		copy(g, c.gates[b][:min(len(c.gates[b]), n*c.heads)])
		c.gates[b] = g
	}
	if c.raw != nil {
		raw := make([]float32, c.heads*hs)
		for h := 0; h < c.heads; h++ {
			copy(raw[h*hs:h*hs+n*dh], c.raw[b][h*old*dh:])
		}
		c.raw[b] = raw
	}
	c.k[b], c.v[b], c.rows[b] = k, v, rows
}

// gateStarts writes into start (one row of heads per selected sequence)
// the forget gates' prefix sum at each sequence's last cached position, 0
// for an empty sequence: where ForgetGate's sums of the new rows continue.
func (c *KVCache) gateStarts(start []float64, batch int) error {
	active := c.pos.active
	if len(active) != batch {
		return fmt.Errorf("%d sequences are selected in the cache, the input has %d", len(active), batch)
	}
	for r, b := range active {
		n := c.pos.Lengths[b]
		if n == 0 {
			continue
		}
		if c.gates == nil || len(c.gates[b]) < n*c.heads {
			return fmt.Errorf("sequence %d holds %d positions and no forget gates", b, n)
		}
		for h := 0; h < c.heads; h++ {
			start[r*c.heads+h] = float64(c.gates[b][(n-1)*c.heads+h])
		}
	}
	return nil
}

// putRows copies, for qLen rows of width 3d (as the attention op receives
// them), the d columns from col on into sequence b's head blocks dst (its
// keys, values or unrotated keys), after its n cached rows.
func (c *KVCache) putRows(dst []float32, b, n int, rows []float32, qLen, col int) {
	d, dh, hs := c.d, c.dHead, c.rows[b]*c.dHead
	for i := 0; i < qLen; i++ {
		row := rows[i*3*d : (i+1)*3*d]
		for h := 0; h < c.heads; h++ {
			at := h*hs + (n+i)*dh
			copy(dst[at:at+dh], row[col+h*dh:])
		}
	}
}

// rotateKeys prepares the cache of a layer with dynamic rotary frequencies
// for qLen new rows per selected sequence, qkv holding them before
// rotation: it keeps their unrotated keys, and when a sequence's factor
// (factors, one per batch row; tabs, its frequencies) differs from the one
// its cached keys were rotated with, it rotates every cached key again,
// from its unrotated value, to the new frequencies, with the arithmetic of
// the rope op itself, so that the cache holds the keys a full pass over
// the sequence so far would compute. The new keys themselves arrive
// rotated through store.
func (c *KVCache) rotateKeys(qkv []float32, qLen int, factors []float64, tabs []*ropeTable) error {
	active := c.pos.active
	d, dh, half := c.d, c.dHead, c.dHead/2
	if len(qkv) != len(active)*qLen*3*d {
		return fmt.Errorf("attention cache: %d values are not %d sequences of %d rows of width 3 x %d", len(qkv), len(active), qLen, d)
	}
	if c.raw == nil {
		for _, b := range active {
			if c.pos.Lengths[b] > 0 {
				return fmt.Errorf("attention cache: sequence %d holds keys rotated without dynamic frequencies", b)
			}
		}
		c.raw, c.rotOf = make([][]float32, len(c.k)), make([]float64, len(c.k))
	}
	for r, b := range active {
		n := c.pos.Lengths[b]
		if c.raw[b] == nil && n > 0 {
			return fmt.Errorf("attention cache: sequence %d holds keys rotated without dynamic frequencies", b)
		}
		c.reserve(b, n, n+qLen)
		if c.raw[b] == nil {
			c.raw[b] = make([]float32, len(c.k[b]))
		}
		hs := c.rows[b] * dh
		c.putRows(c.raw[b], b, n, qkv[r*qLen*3*d:], qLen, d)
		if n > 0 && c.rotOf[b] != factors[r] {
			tab := tabs[r]
			for h := 0; h < c.heads; h++ {
				for p := 0; p < n; p++ {
					at := h*hs + p*dh
					a, bb := c.raw[b][at:][:half], c.raw[b][at+half:][:half]
					ya, yb := c.k[b][at:][:half], c.k[b][at+half:][:half]
					cos, sin := tab.cos[p*half:][:half], tab.sin[p*half:][:half]
					for k := range a {
						x1, x2 := float64(a[k]), float64(bb[k])
						ya[k] = float32(x1*cos[k] - x2*sin[k])
						yb[k] = float32(x1*sin[k] + x2*cos[k])
					}
				}
			}
		}
		c.rotOf[b] = factors[r]
	}
	return nil
}

// store copies the keys and values of qLen new rows per selected sequence
// from qkv (one block of qLen rows of width 3d per batch row, as the
// attention op receives them) into the cache after the sequence's cached
// rows, and returns the kernel's views (valid until the next call): the new
// queries against every cached key and value, the output rows in out. With
// scored > 0, only the last scored new rows of each sequence are queries,
// and out has scored rows per sequence. The
// positions are not advanced: the decoder does it once every layer has run.
func (c *KVCache) store(qkv, gate, out []float32, qLen, scored int) ([]flash.Seq[float32], error) {
	active := c.pos.active
	d, dh := c.d, c.dHead
	if len(qkv) != len(active)*qLen*3*d {
		return nil, fmt.Errorf("attention cache: %d values are not %d sequences of %d rows of width 3 x %d", len(qkv), len(active), qLen, d)
	}
	if gate != nil && c.gates == nil {
		for _, b := range active {
			if c.pos.Lengths[b] > 0 {
				return nil, fmt.Errorf("attention cache: sequence %d holds positions without forget gates", b)
			}
		}
		c.gates = make([][]float32, len(c.k))
	}
	c.seqs = resize(c.seqs, len(active))
	seqs := c.seqs
	for r, b := range active {
		n := c.pos.Lengths[b]
		c.reserve(b, n, n+qLen)
		hs := c.rows[b] * dh
		rows := qkv[r*qLen*3*d:]
		c.putRows(c.k[b], b, n, rows, qLen, d)
		c.putRows(c.v[b], b, n, rows, qLen, 2*d)
		if gate != nil {
			if len(c.gates[b]) < (n+qLen)*c.heads { // a sequence reserve did not grow
				g := make([]float32, c.rows[b]*c.heads)
				copy(g, c.gates[b])
				c.gates[b] = g
			}
			copy(c.gates[b][n*c.heads:(n+qLen)*c.heads], gate[r*qLen*c.heads:])
		}
		seqs[r] = flash.Seq[float32]{Q: rows, K: c.k[b], V: c.v[b], O: out[r*qLen*d:],
			LdQ: 3 * d, LdK: dh, LdV: dh, LdO: d, Offset: n, HK: hs, HV: hs}
		if gate != nil {
			seqs[r].C, seqs[r].LdC = c.gates[b], c.heads
		}
		if scored > 0 { // only the last scored new rows are queries
			seqs[r].Q, seqs[r].O, seqs[r].Offset = rows[(qLen-scored)*3*d:], out[r*scored*d:], n+qLen-scored
		}
	}
	return seqs, nil
}

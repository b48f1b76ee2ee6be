package bpe

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
)

// computeHash is the hex SHA-256 of what decides the ids of a text and the
// bytes of an id: each id's bytes (or that no token has it), then, when
// there are merges, the pattern, ignore_merges and the merges in rank order,
// then the added tokens by id with their flag "normalized". How a
// tokenizer.json spells these (token names, key order, merges as strings or
// pairs, unused fields) does not count, and neither does the pattern of a
// tokenizer without merges, which encodes every byte alone whatever it is:
// such a tokenizer whose ids are the byte values has the hash of [Bytes].
func (t *Tokenizer) computeHash() string {
	u32 := func(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
	buf := []byte("byte-level BPE v1\x00")
	buf = u32(buf, uint32(len(t.tokens)))
	for _, tok := range t.tokens {
		if tok == nil {
			buf = u32(buf, math.MaxUint32)
			continue
		}
		buf = u32(buf, uint32(len(tok)))
		buf = append(buf, tok...)
	}
	buf = u32(buf, uint32(len(t.merges)))
	if len(t.merges) > 0 {
		buf = append(buf, t.pattern.String()...)
		buf = append(buf, 0)
		if t.ignoreMerges {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
		for _, m := range t.merges {
			buf = u32(u32(buf, m.Left), m.Right)
		}
	}
	added := slices.Clone(t.added)
	slices.SortFunc(added, func(a, b AddedToken) int { return int(a.ID) - int(b.ID) })
	buf = u32(buf, uint32(len(added)))
	for _, a := range added {
		buf = u32(buf, a.ID)
		if a.Normalized {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

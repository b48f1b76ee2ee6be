package eval

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// BitsPerByteMarkdown writes the comparison in bits per byte: a row per
// evaluation length, named by its length in tokens and in bytes of text
// (ContextBytes), a column per scheme with the mean over seeds (and the
// lowest and highest seed when there are several). When beside is not
// nil (another experiment, named besideName, typically one of another
// tokenizer), each scheme the two share gets a second column: beside's
// bits per byte at the same bytes of context, interpolated linearly in the
// logarithm of the context between the two lengths beside evaluated around
// it ("–" outside them).
func (c Comparison) BitsPerByteMarkdown(w io.Writer, beside *Comparison, besideName string) error {
	if len(c.Schemes) == 0 {
		return nil
	}
	type column struct {
		s     Scheme
		other *Scheme
	}
	var cols []column
	for _, s := range c.Schemes {
		cols = append(cols, column{s: s})
		if beside == nil {
			continue
		}
		for _, o := range beside.Schemes {
			if o.Label() == s.Label() {
				cols = append(cols, column{s: s, other: &o})
				break
			}
		}
	}
	var b strings.Builder
	title := "bits per byte"
	if seeds := len(c.Schemes[0].Seeds); seeds > 1 {
		title = fmt.Sprintf("bits per byte, mean of %d seeds (min–max)", seeds)
	}
	fmt.Fprintf(&b, "| eval length (bytes of context): %s |", title)
	for _, col := range cols {
		if col.other != nil {
			fmt.Fprintf(&b, " %s, %s at equal bytes |", col.s.Label(), besideName)
		} else {
			fmt.Fprintf(&b, " %s |", col.s.Label())
		}
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, l := range c.lengths() {
		bytes := 0.0
		for _, s := range c.Schemes {
			if st, ok := s.at(l); ok {
				bytes = st.ContextBytes
				break
			}
		}
		fmt.Fprintf(&b, "| %d (%.0f bytes) |", l, bytes)
		for _, col := range cols {
			st, ok := col.s.at(l)
			switch {
			case !ok:
				b.WriteString(" – |")
			case col.other != nil:
				if v, ok := col.other.bitsPerByteAt(st.ContextBytes); ok {
					fmt.Fprintf(&b, " %.4f |", v)
				} else {
					b.WriteString(" – |")
				}
			case len(col.s.Seeds) > 1:
				fmt.Fprintf(&b, " %.4f (%.4f–%.4f) |", st.MeanBPB, st.MinBPB, st.MaxBPB)
			default:
				fmt.Fprintf(&b, " %.4f |", st.MeanBPB)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// bitsPerByteAt is the scheme's mean bits per byte at a context of the
// given bytes, interpolated linearly in log(bytes) between the two
// evaluated lengths around it; false outside them.
func (s Scheme) bitsPerByteAt(bytes float64) (float64, bool) {
	var lo, hi *LengthStats
	for i := range s.Lengths {
		st := &s.Lengths[i]
		if st.ContextBytes <= bytes && (lo == nil || st.ContextBytes > lo.ContextBytes) {
			lo = st
		}
		if st.ContextBytes >= bytes && (hi == nil || st.ContextBytes < hi.ContextBytes) {
			hi = st
		}
	}
	switch {
	case lo == nil || hi == nil:
		return 0, false
	case lo.ContextBytes == hi.ContextBytes:
		return lo.MeanBPB, true
	}
	t := math.Log(bytes/lo.ContextBytes) / math.Log(hi.ContextBytes/lo.ContextBytes)
	return lo.MeanBPB + t*(hi.MeanBPB-lo.MeanBPB), true
}

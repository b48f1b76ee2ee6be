package position

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

// MaskValue is the additive bias of a masked (future) key. It is finite on
// purpose: -Inf turns fully masked rows into NaN and cannot be stored in JSON.
// exp(MaskValue - rowmax) underflows to exactly 0 in float32 and float64.
const MaskValue = -1e9

// AlibiSlopes returns the per-head ALiBi slopes m_h of Press et al. (2022).
//
// For n a power of two they form the geometric sequence 2^(-8/n),
// 2^(-16/n), ..., 2^(-8): n=8 gives 1/2, 1/4, ..., 1/256. For any other n they
// are the slopes for the largest power of two p below n, followed by the first
// n-p slopes at even indices (0, 2, 4, ...) of the sequence for 2p, as in the
// paper's reference code. It panics if nHeads < 1; validate configs first.
func AlibiSlopes(nHeads int) []float32 {
	if nHeads < 1 {
		panic(fmt.Sprintf("position.AlibiSlopes: nHeads must be >= 1, got %d", nHeads))
	}
	s := alibiSlopes64(nHeads)
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}

func alibiSlopes64(n int) []float64 {
	if n&(n-1) == 0 {
		return geometricSlopes(n)
	}
	p := 1
	for p*2 < n {
		p *= 2
	}
	out := geometricSlopes(p)
	extra := alibiSlopes64(2 * p)
	for i := 0; len(out) < n; i += 2 {
		out = append(out, extra[i])
	}
	return out
}

// geometricSlopes is the power-of-two case: start = ratio = 2^(-8/n).
func geometricSlopes(n int) []float64 {
	start := math.Pow(2, -8/float64(n))
	out := make([]float64, n)
	v := start
	for i := range out {
		out[i] = v
		v *= start
	}
	return out
}

// AlibiBias returns the additive attention bias, float32 of shape
// (len(slopes), qLen, kLen). Query row i stands at absolute position offset+i
// and key column j at position j, so the distance is d = (offset+i) - j.
//
// Causal: -m_h*d where j <= offset+i and exactly MaskValue (-1e9) where
// j > offset+i. Non-causal (bidirectional): -m_h*|d| everywhere.
// offset = kLen-qLen aligns queries with the end of a key/value cache.
// With a single zero slope it is the plain causal mask (see CausalMask).
func AlibiBias(slopes []float32, qLen, kLen, offset int, causal bool) *tensor.Dense {
	h := len(slopes)
	data := make([]float32, h*qLen*kLen)
	for hh, m := range slopes {
		for i := 0; i < qLen; i++ {
			row := data[(hh*qLen+i)*kLen : (hh*qLen+i+1)*kLen]
			q := offset + i // absolute query position
			for j := range row {
				d := q - j // true outer difference: query index minus key index
				switch {
				case d < 0 && causal:
					row[j] = MaskValue
				case d < 0:
					row[j] = -m * float32(-d)
				default:
					row[j] = -m * float32(d)
				}
			}
		}
	}
	return tensor.New(tensor.WithShape(h, qLen, kLen), tensor.WithBacking(data))
}

// CausalMask returns the causal mask alone, shape (1, qLen, kLen): 0 where
// key j <= offset+i and MaskValue above. It is AlibiBias with one zero slope,
// so the mask has exactly one implementation.
func CausalMask(qLen, kLen, offset int) *tensor.Dense {
	b := AlibiBias([]float32{0}, qLen, kLen, offset, true)
	// -0 * d is -0; normalise to +0 so the mask prints and compares cleanly.
	for i, v := range elems[float32](b) {
		if v == 0 {
			elems[float32](b)[i] = 0
		}
	}
	return b
}

// SinusoidalTable returns the (length, d) sin/cos position table of Vaswani
// et al. in the fairseq layout used by the reference: the first d/2 columns
// are sin(p*f_k), the next d/2 are cos(p*f_k), with f_k = 10000^(-k/(d/2-1)),
// and a zero last column when d is odd.
func SinusoidalTable(length, d int) *tensor.Dense {
	half := d / 2
	denom := float64(half - 1)
	if denom < 1 {
		denom = 1
	}
	data := make([]float32, length*d)
	for p := 0; p < length; p++ {
		row := data[p*d : (p+1)*d]
		for k := 0; k < half; k++ {
			// float32 arithmetic, as in the reference's torch table.
			f := float32(math.Exp(float64(float32(k) * float32(-math.Log(10000.0)/denom))))
			a := float64(float32(p) * f)
			row[k] = float32(math.Sin(a))
			row[half+k] = float32(math.Cos(a))
		}
	}
	return tensor.New(tensor.WithShape(length, d), tensor.WithBacking(data))
}

// AlibiScheme is the ALiBi bias of Press et al.: head h adds -m_h*(i-j) to
// the score of the query at position i on key j. Its parameters are the
// slopes m_h (a (heads) tensor from AlibiSlopes), a constant buffer: they get
// no gradient. The kernel reads the biases from one table per head, built
// by AlibiBias, so the formula has exactly one implementation.
type AlibiScheme struct{}

// Name implements BiasScheme.
func (AlibiScheme) Name() string { return "alibi" }

// CheckParams implements BiasScheme: the slopes are a (heads) tensor.
func (AlibiScheme) CheckParams(p tensor.Shape, call BiasCall) error {
	if len(p) != 1 || p[0] != call.Heads {
		return fmt.Errorf("ALiBi slopes have shape %v, want (%d)", p, call.Heads)
	}
	return nil
}

// Trainable implements BiasScheme: the slopes are constant.
func (AlibiScheme) Trainable() bool { return false }

// ParamGrad32 implements BiasScheme; the slopes have no gradient.
func (AlibiScheme) ParamGrad32(_, _, _ []float32) {}

// ParamGrad64 implements BiasScheme; the slopes have no gradient.
func (AlibiScheme) ParamGrad64(_, _, _ []float64) {}

// Bias32 implements BiasScheme: the distance tables of the slopes.
func (AlibiScheme) Bias32(slopes []float32, _, kLen int) KernelBias[float32] {
	return alibiTables[float32](slopes, kLen)
}

// Bias64 implements BiasScheme: the distance tables of the slopes, which
// are rounded to float32 first, as the tables are made by AlibiBias.
func (AlibiScheme) Bias64(slopes []float64, _, kLen int) KernelBias[float64] {
	s32 := make([]float32, len(slopes))
	for i, v := range slopes {
		s32[i] = float32(v)
	}
	return alibiTables[float64](s32, kLen)
}

// alibiTables returns the distance tables of the slopes for kLen keys: row
// h is the last query row of AlibiBias(slopes, 1, n, n-1, true), the biases
// of distances n-1 down to 0, so the formula has one implementation.
func alibiTables[T float](slopes []float32, n int) distanceBias[T] {
	b := elems[float32](AlibiBias(slopes, 1, n, n-1, true))
	tables := make([][]T, len(slopes))
	for h, m := range slopes {
		if m == 0 {
			continue // no bias: the plain causal mask
		}
		tables[h] = make([]T, n)
		for t, v := range b[h*n : (h+1)*n] {
			tables[h][t] = T(v)
		}
	}
	return distanceBias[T]{tables: tables}
}

// AlibiPosition is the scheme "alibi" (Press et al., ICLR 2022): no
// embeddings, and in every layer the bias AlibiScheme computes inside the
// kernel from the per-head slopes AlibiSlopes, a constant buffer saved in
// checkpoints as "buffers.alibi_slopes".
type AlibiPosition struct{ NoPosition }

// alibiSlopesName is the name of the slopes' buffer.
const alibiSlopesName = "alibi_slopes"

// Name implements Scheme.
func (AlibiPosition) Name() string { return "alibi" }

// Buffer implements Scheme: the slopes, one per head.
func (AlibiPosition) Buffer(shape ModelShape) (string, []float32) {
	return alibiSlopesName, AlibiSlopes(shape.Heads)
}

// AttentionBias implements Scheme: AlibiScheme on the slopes.
func (AlibiPosition) AttentionBias(ModelShape) (BiasScheme, string) {
	return AlibiScheme{}, alibiSlopesName
}

// EvalBytes implements Scheme: each layer's distance tables, one float32
// per head and key.
func (AlibiPosition) EvalBytes(shape ModelShape, _, length int) int64 {
	return distanceTableBytes(shape, length)
}

// distanceTableBytes is the memory of the distance tables (distanceBias)
// that every layer's attention keeps for length keys: one float32 per
// layer, head and key.
func distanceTableBytes(shape ModelShape, length int) int64 {
	return int64(shape.Layers) * int64(shape.Heads) * int64(length) * 4
}

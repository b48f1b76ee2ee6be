package flash

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sbDirect is stick-breaking attention straight from the paper's
// formula, in float64 and probability space (not the kernels' log space):
// for each query, the keys from the nearest down, each taking sigmoid of its
// score times what is left. q, k, v are (t, heads*dh) row-major; queries
// are at positions offset..; it returns the output and the weights
// A[h][i][j].
func sbDirect(q, k, v, b []float64, qLen, offset, heads, dh int) ([]float64, [][][]float64) {
	d := heads * dh
	out := make([]float64, qLen*d)
	weights := make([][][]float64, heads)
	scale := 1 / math.Sqrt(float64(dh))
	for h := range heads {
		weights[h] = make([][]float64, qLen)
		for i := range qLen {
			pos := offset + i
			a := make([]float64, pos)
			left := 1.0
			for j := pos - 1; j >= 0; j-- {
				z := 0.0
				for c := range dh {
					z += q[i*d+h*dh+c] * k[j*d+h*dh+c]
				}
				beta := 1 / (1 + math.Exp(-z*scale))
				a[j] = beta * left
				left *= 1 - beta
			}
			for c := range dh {
				o := left * b[h*dh+c]
				for j := range pos {
					o += a[j] * v[j*d+h*dh+c]
				}
				out[i*d+h*dh+c] = o
			}
			weights[h][i] = a
		}
	}
	return out, weights
}

// sbCase is a random problem: queries, keys, values and the remainder's
// vectors, with scores spread over a few units so that weights take every
// size.
type sbCase struct {
	q, k, v, b              []float64
	qLen, offset, heads, dh int
}

func newSBCase(rng *rand.Rand, qLen, offset, heads, dh int) sbCase {
	d, kLen := heads*dh, offset+qLen
	fill := func(n int, sd, mean float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = mean + sd*rng.NormFloat64()
		}
		return x
	}
	return sbCase{q: fill(qLen*d, 1, 0.3), k: fill(kLen*d, 1, -0.2), v: fill(kLen*d, 1, 0), b: fill(d, 1, 0),
		qLen: qLen, offset: offset, heads: heads, dh: dh}
}

// seqs returns the case as the kernels' views in element type T.
func sbSeqs[T Float](c sbCase) (Seq[T], []T) {
	conv := func(x []float64) []T {
		y := make([]T, len(x))
		for i, v := range x {
			y[i] = T(v)
		}
		return y
	}
	d := c.heads * c.dh
	return Seq[T]{Q: conv(c.q), K: conv(c.k), V: conv(c.v), O: make([]T, c.qLen*d), LdQ: d, LdK: d, LdV: d, LdO: d, Offset: c.offset}, conv(c.b)
}

func TestStickBreakingForwardMatchesFormula(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ qLen, offset, heads, dh int }{
		{1, 0, 1, 4}, {2, 0, 2, 3}, {7, 0, 2, 5}, {65, 0, 2, 8}, {300, 0, 2, 16}, // past 4 tiles of 64
		{3, 200, 2, 8}, {1, 299, 2, 16}, {70, 130, 1, 8}, // queries after a cache
	} {
		c := newSBCase(rng, tc.qLen, tc.offset, tc.heads, tc.dh)
		want, _ := sbDirect(c.q, c.k, c.v, c.b, c.qLen, c.offset, c.heads, c.dh)
		s64, b64 := sbSeqs[float64](c)
		SBForward([]Seq[float64]{s64}, c.qLen, c.heads, c.dh, 1/math.Sqrt(float64(c.dh)), b64, nil)
		s32, b32 := sbSeqs[float32](c)
		SBForward([]Seq[float32]{s32}, c.qLen, c.heads, c.dh, float32(1/math.Sqrt(float64(c.dh))), b32, nil)
		big := 0.0
		for _, w := range want {
			big = max(big, math.Abs(w))
		}
		for i, w := range want {
			if e := math.Abs(s64.O[i] - w); e > 1e-12*big {
				t.Fatalf("%+v: float64 output %d = %.15g, formula %.15g", tc, i, s64.O[i], w)
			}
			if e := math.Abs(float64(s32.O[i]) - w); e > 1e-5*big {
				t.Fatalf("%+v: float32 output %d = %.9g, formula %.9g", tc, i, s32.O[i], w)
			}
		}
	}
}

// TestStickBreakingWeights checks the formula's own properties on the
// weights: each in (0, 1), a row's sum plus the remainder 1, and the
// nearest key's weight sigmoid of its score.
func TestStickBreakingWeights(t *testing.T) {
	c := newSBCase(rand.New(rand.NewPCG(3, 4)), 40, 0, 1, 4)
	_, a := sbDirect(c.q, c.k, c.v, c.b, c.qLen, 0, 1, 4)
	for i, row := range a[0] {
		sum := 0.0
		for _, x := range row {
			if x <= 0 || x >= 1 {
				t.Fatalf("row %d: weight %g", i, x)
			}
			sum += x
		}
		if sum >= 1 {
			t.Fatalf("row %d: weights sum to %g, leaving nothing", i, sum)
		}
	}
}

// TestStickBreakingGradients compares the backward kernel (float64) with
// central differences of the formula's loss sum(O * G), for every input.
func TestStickBreakingGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ qLen, heads, dh int }{{5, 2, 3}, {70, 2, 4}, {150, 1, 4}} {
		c := newSBCase(rng, tc.qLen, 0, tc.heads, tc.dh)
		d := c.heads * c.dh
		gOut := make([]float64, c.qLen*d)
		for i := range gOut {
			gOut[i] = rng.NormFloat64()
		}
		loss := func() float64 {
			o, _ := sbDirect(c.q, c.k, c.v, c.b, c.qLen, 0, c.heads, c.dh)
			s := 0.0
			for i := range o {
				s += o[i] * gOut[i]
			}
			return s
		}
		seq, b := sbSeqs[float64](c)
		scale := 1 / math.Sqrt(float64(c.dh))
		SBForward([]Seq[float64]{seq}, c.qLen, c.heads, c.dh, scale, b, nil)
		g := GradSeq[float64]{DO: gOut, DQ: make([]float64, c.qLen*d), DK: make([]float64, c.qLen*d), DV: make([]float64, c.qLen*d),
			LdDO: d, LdDQ: d, LdDK: d, LdDV: d}
		dRem := make([]float64, d)
		SBBackward([]Seq[float64]{seq}, []GradSeq[float64]{g}, c.qLen, c.heads, c.dh, scale, b, dRem)
		for _, in := range []struct {
			name string
			x    []float64
			grad []float64
		}{{"q", c.q, g.DQ}, {"k", c.k, g.DK}, {"v", c.v, g.DV}, {"b", c.b, dRem}} {
			for n := 0; n < 25; n++ {
				i := rng.IntN(len(in.x))
				old, h := in.x[i], 1e-5
				in.x[i] = old + h
				up := loss()
				in.x[i] = old - h
				down := loss()
				in.x[i] = old
				fd := (up - down) / (2 * h)
				if e := math.Abs(fd - in.grad[i]); e > 1e-6*max(1, math.Abs(fd)) {
					t.Fatalf("%+v: d%s[%d] = %.10g, finite differences %.10g", tc, in.name, i, in.grad[i], fd)
				}
			}
		}
	}
}

// TestStickBreakingStats compares the forward pass's statistics with
// those of the formula's weights.
func TestStickBreakingStats(t *testing.T) {
	c := newSBCase(rand.New(rand.NewPCG(7, 8)), 150, 0, 2, 8)
	const far = 20
	_, a := sbDirect(c.q, c.k, c.v, c.b, c.qLen, 0, c.heads, c.dh)
	for _, f32 := range []bool{false, true} {
		st := NewStats(c.heads, far)
		if f32 {
			s, b := sbSeqs[float32](c)
			SBForward([]Seq[float32]{s}, c.qLen, c.heads, c.dh, float32(1/math.Sqrt(float64(c.dh))), b, st)
		} else {
			s, b := sbSeqs[float64](c)
			SBForward([]Seq[float64]{s}, c.qLen, c.heads, c.dh, 1/math.Sqrt(float64(c.dh)), b, st)
		}
		for h := range c.heads {
			var dist, ent, farMass float64
			for i := far; i < c.qLen; i++ {
				for j, x := range a[h][i] {
					dist += x * float64(i-j)
					ent -= x * math.Log(x)
					if i-j >= far {
						farMass += x
					}
				}
			}
			tol := 1e-9
			if f32 {
				tol = 1e-4
			}
			if st.Queries[h] != c.qLen-far || math.Abs(st.Distance[h]-dist) > tol*dist || math.Abs(st.Entropy[h]-ent) > tol*ent || math.Abs(st.FarMass[h]-farMass) > tol*farMass {
				t.Errorf("float32 %v head %d: %d queries, distance %g, entropy %g, far %g; formula %d, %g, %g, %g",
					f32, h, st.Queries[h], st.Distance[h], st.Entropy[h], st.FarMass[h], c.qLen-far, dist, ent, farMass)
			}
		}
	}
}

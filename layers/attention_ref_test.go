package layers

// The materialised attention kernels the project used before the tiled
// ones: per (sequence, head), the whole (T, T) matrix of scores, biased by a
// materialised bias tensor (position.AlibiBias or position.CausalMask), a row softmax, and the
// probabilities kept for the backward pass. They stay as a reference that
// the tiled kernels are tested and benchmarked against.

import (
	"math"

	"github.com/alibi-go/alibi/layers/internal/flash"
	"github.com/alibi-go/alibi/layers/internal/vmath"
)

// attnDims are the sizes of one attention call.
type attnDims struct {
	batch, t, heads, dHead, d, biasHeads int
	scale                                float64
}

// attnForward runs every (batch, head) unit in parallel. probs, when not nil,
// receives the attention probabilities; it is returned (nil when not kept).
// Otherwise each worker computes its units in its own scratch buffer.
func attnForward[T float](dm attnDims, qkv, bias, out, probs []T, kept *any) []T {
	units := dm.batch * dm.heads
	tt := dm.t * dm.t
	var scratch [][]T
	if probs == nil {
		scratch = workerScratch[T](kept, tt)
	}
	parallelWorkers(units, 1, func(wk, _, lo, hi int) {
		for u := lo; u < hi; u++ {
			b, h := u/dm.heads, u%dm.heads
			var p []T
			if probs == nil {
				p = scratch[wk]
			} else {
				p = probs[u*tt : (u+1)*tt]
			}
			q, k, v := dm.qkvOffsets(b, h)
			w := 3 * dm.d
			flash.Gemm(false, true, dm.t, dm.t, dm.dHead, T(dm.scale), qkv[q:], w, qkv[k:], w, 0, p, dm.t)
			hb := h
			if dm.biasHeads == 1 {
				hb = 0
			}
			softmaxRowsBiased(p, bias[hb*tt:(hb+1)*tt], dm.t)
			flash.Gemm(false, false, dm.t, dm.dHead, dm.t, 1, p, dm.t, qkv[v:], w, 0, out[b*dm.t*dm.d+h*dm.dHead:], dm.d)
		}
	})
	return probs
}

// qkvOffsets returns where head h of sequence b starts in the qkv matrix.
func (dm attnDims) qkvOffsets(b, h int) (q, k, v int) {
	row := b * dm.t * 3 * dm.d
	q = row + h*dm.dHead
	return q, q + dm.d, q + 2*dm.d
}

// softmaxRowsBiased replaces each row of s (n x n) by softmax(s + bias),
// subtracting the row's own maximum first so that large penalties and the
// -1e9 mask never overflow.
func softmaxRowsBiased[T float](s, bias []T, n int) {
	if s32, ok := any(s).([]float32); ok {
		softmaxRowsBiased32(s32, any(bias).([]float32), n)
		return
	}
	for i := 0; i < n; i++ {
		row, brow := s[i*n:(i+1)*n], bias[i*n:(i+1)*n]
		mx := T(math.Inf(-1))
		for j := range row {
			row[j] += brow[j]
			if row[j] > mx {
				mx = row[j]
			}
		}
		var sum float64
		for j, x := range row {
			e := math.Exp(float64(x - mx))
			row[j] = T(e)
			sum += e
		}
		inv := T(1 / sum)
		for j := range row {
			row[j] *= inv
		}
	}
}

// attnBackward: with P the probabilities and dO the output gradient of one
// (batch, head) unit,
//
//	dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(P*dP)),
//	dQ = scale dS K,  dK = scale dS^T Q.
func attnBackward[T float](dm attnDims, qkv, probs, dout, dqkv []T, scratch [][]T) {
	tt := dm.t * dm.t
	w := 3 * dm.d
	parallelWorkers(dm.batch*dm.heads, 1, func(wk, _, lo, hi int) {
		ds := scratch[wk]
		for u := lo; u < hi; u++ {
			b, h := u/dm.heads, u%dm.heads
			p := probs[u*tt : (u+1)*tt]
			q, k, v := dm.qkvOffsets(b, h)
			do := dout[b*dm.t*dm.d+h*dm.dHead:]
			flash.Gemm(true, false, dm.t, dm.dHead, dm.t, 1, p, dm.t, do, dm.d, 0, dqkv[v:], w)
			flash.Gemm(false, true, dm.t, dm.t, dm.dHead, 1, do, dm.d, qkv[v:], w, 0, ds, dm.t)
			for i := 0; i < dm.t; i++ {
				pr, dr := p[i*dm.t:(i+1)*dm.t], ds[i*dm.t:(i+1)*dm.t]
				var dot T
				for j := range pr {
					dot += pr[j] * dr[j]
				}
				for j := range pr {
					dr[j] = pr[j] * (dr[j] - dot)
				}
			}
			flash.Gemm(false, false, dm.t, dm.dHead, dm.t, T(dm.scale), ds, dm.t, qkv[k:], w, 0, dqkv[q:], w)
			flash.Gemm(true, false, dm.t, dm.dHead, dm.t, T(dm.scale), ds, dm.t, qkv[q:], w, 0, dqkv[k:], w)
		}
	})
}

// softmaxRowsBiased32 is softmaxRowsBiased in float32 arithmetic with the
// vmath kernels.
func softmaxRowsBiased32(s, bias []float32, n int) {
	for i := 0; i < n; i++ {
		row := s[i*n : (i+1)*n]
		mx := vmath.AddMax(row, bias[i*n:(i+1)*n])
		vmath.Scale(row, 1/vmath.ExpSubSum(row, mx))
	}
}

// workerScratch returns one buffer of n elements per worker, kept in *kept
// and reused while the sizes stay the same.
func workerScratch[T float](kept *any, n int) [][]T {
	w := workers()
	if b, ok := (*kept).([][]T); ok && len(b) == w && len(b[0]) == n {
		return b
	}
	b := make([][]T, w)
	for i := range b {
		b[i] = make([]T, n)
	}
	*kept = b
	return b
}

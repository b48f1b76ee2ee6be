package eval

import (
	"fmt"

	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/osutil"
)

// MemoryPercent is the share of a memory limit that an evaluation's estimate
// may take (FitsMemory). The estimate itself is close: within 5% of the
// resident memory an evaluation of the tiny model adds, at lengths 2048 and
// 8192. The other 20% is for what it cannot see: the limit is usually the
// memory available when the command starts (osutil.AvailableMemory), which
// on a shared machine shrinks while others allocate during an evaluation
// that may run for minutes, and which counts page cache that the kernel can
// only reclaim by evicting files in use. An estimate of 97% of the available
// memory (22.2 of 22.8 GB) was once admitted; the evaluation ran for 10
// minutes without output until it was killed.
const MemoryPercent = 80

// FitsMemory reports whether an estimate of need bytes is admitted under a
// limit of limit bytes: whether it is at most MemoryPercent (80%) of it. A
// limit of 0 or less (unknown) admits everything.
func FitsMemory(need, limit int64) bool {
	return limit <= 0 || need <= admitted(limit)
}

// admitted is the largest estimate FitsMemory admits under limit.
func admitted(limit int64) int64 { return limit / 100 * MemoryPercent }

// CheckMemory returns a *MemoryError when the estimated memory of scoring a
// stream of n tokens with o (EstimateBytes) does not fit in o.MemoryLimit
// (FitsMemory), and nil when it does or there is no limit. It allocates
// nothing.
func CheckMemory(m *model.Model, n int, o Options) error {
	if need := EstimateBytes(m, n, o); !FitsMemory(need, o.MemoryLimit) {
		l, batch := largestPass(n, o)
		return &MemoryError{Len: l, Batch: batch, Need: need, Limit: o.MemoryLimit}
	}
	return nil
}

// EstimateBytes estimates the memory that Perplexity allocates for a stream
// of n tokens: the largest evaluation graph it builds (see
// model.EvalGraphBytes) plus the harness's own per-token buffers (40 bytes:
// ids, targets and losses) and its per-position sums.
func EstimateBytes(m *model.Model, n int, o Options) int64 {
	l, batch := largestPass(n, o)
	return m.EvalGraphBytes(batch, l) + int64(batch*l)*40 + int64(o.Len)*16
}

// largestPass returns the window length and batch of the largest forward
// pass Perplexity makes over n tokens.
func largestPass(n int, o Options) (l, batch int) {
	n = available(n, o)
	if o.BatchTokens < 1 {
		o.BatchTokens = defaultBatchTokens
	}
	l = max(1, min(o.Len, n-1))
	windows := max(1, (n-1+o.Len-1)/o.Len)
	if o.Stride > 0 {
		windows = max(1, (n-1-o.Len+o.Stride-1)/o.Stride+1)
	}
	return l, min(windows, max(1, o.BatchTokens/l))
}

// MemoryError says that an evaluation's estimated memory does not fit in the
// limit (FitsMemory).
type MemoryError struct {
	Len, Batch  int   // the window length and the windows per forward pass
	Need, Limit int64 // bytes
}

func (e *MemoryError) Error() string {
	what := fmt.Sprintf("%d windows of %d tokens", e.Batch, e.Len)
	if e.Batch == 1 {
		what = fmt.Sprintf("one window of %d tokens", e.Len)
	}
	return fmt.Sprintf("length %d needs about %s (%s per forward pass) but only %s is available, of which an evaluation may take %d%% (%s)",
		e.Len, osutil.FormatBytes(e.Need), what, osutil.FormatBytes(e.Limit), MemoryPercent, osutil.FormatBytes(admitted(e.Limit)))
}

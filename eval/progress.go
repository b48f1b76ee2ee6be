package eval

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// ProgressEvery is the most time that passes between two progress lines of
// an evaluation that is not on a terminal, as between training's.
const ProgressEvery = 10 * time.Second

// NewProgress returns an Options.Progress for an evaluation at one length
// that reports on w: a bar on a terminal, otherwise a line whenever
// ProgressEvery (10 s) has passed since the start or the previous line (the
// last call too, so a long evaluation ends with its 100% line; one shorter
// than 10 s prints none). now is the clock of those lines (nil: time.Now).
func NewProgress(w io.Writer, terminal bool, length int, now func() time.Time) func(scored, total int) {
	if terminal {
		return barProgress(w, length)
	}
	if now == nil {
		now = time.Now
	}
	start := now()
	last := start
	return func(scored, total int) {
		t := now()
		if t.Sub(last) < ProgressEvery {
			return
		}
		last = t
		fmt.Fprintf(w, "length %d: %d of %d tokens scored (%.0f%%) in %.0fs\n",
			length, scored, total, 100*float64(scored)/float64(total), t.Sub(start).Seconds())
	}
}

// barProgress draws a bar of the tokens scored at one length.
func barProgress(w io.Writer, length int) func(scored, total int) {
	var bar *progressbar.ProgressBar
	return func(scored, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(fmt.Sprintf("length %d", length)),
				progressbar.OptionShowCount(), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		bar.Set(scored)
		if scored == total {
			bar.Finish()
		}
	}
}

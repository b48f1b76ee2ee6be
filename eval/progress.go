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
	return progress(w, terminal, fmt.Sprintf("length %d", length), "tokens scored", now)
}

// NewPasskeyProgress returns a PasskeyOptions.Progress that reports on w as
// NewProgress does, counting the prompt tokens run.
func NewPasskeyProgress(w io.Writer, terminal bool, now func() time.Time) func(done, total int) {
	return progress(w, terminal, "passkey", "prompt tokens run", now)
}

// progress reports the progress of the task named label, counted in unit.
func progress(w io.Writer, terminal bool, label, unit string, now func() time.Time) func(scored, total int) {
	if terminal {
		return barProgress(w, label)
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
		fmt.Fprintf(w, "%s: %d of %d %s (%.0f%%) in %.0fs\n",
			label, scored, total, unit, 100*float64(scored)/float64(total), t.Sub(start).Seconds())
	}
}

// barProgress draws a bar of a task's progress.
func barProgress(w io.Writer, label string) func(scored, total int) {
	var bar *progressbar.ProgressBar
	return func(scored, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(label),
				progressbar.OptionShowCount(), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		bar.Set(scored)
		if scored == total {
			bar.Finish()
		}
	}
}

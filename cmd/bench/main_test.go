package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// microFlags measure a row quickly: the micro config for both steps and
// in bf16 for the bf16 one, one or two steps of each a round and a short
// peak.
var microFlags = []string{"--tiny-config", "../../configs/micro.yaml", "--small-config", "../../configs/micro.yaml",
	"--tiny-bf16-config", "testdata/micro-bf16.yaml", "--tiny-steps", "2", "--small-steps", "1", "--peak-time", "5ms"}

// run runs the command and returns its exit code, stdout and stderr.
func run(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := command(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// microFLOPs is a micro training step's floating-point operations per
// token (d 32, d_ff 64, 2 layers, vocab 256, length 32), worked out by
// hand from model.Config.FLOPsPerToken's terms.
const microFLOPs = 162240

// --out stores the measured row beside the rows of other processors, and
// regenerates the page's table, leaving the rest of the page as it was.
func TestCommandWritesRow(t *testing.T) {
	dir := t.TempDir()
	jsonPath, pagePath := filepath.Join(dir, "speed.json"), filepath.Join(dir, "speed.md")
	other := row("Other", "Some CPU", "1", "2", 50)
	b, err := encodeRows([]Row{other})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jsonPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	page := "# Speed\n\nabove\n" + tableStart + "\nstale\n" + tableEnd + "\n\nbelow\n"
	if err := os.WriteFile(pagePath, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := run(append(microFlags, "--rounds", "1", "--out", jsonPath, "--note", "a test")...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	rows, err := readRows(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2: %+v", len(rows), rows)
	}
	var got Row
	for _, r := range rows {
		if r.Processor.Same(other.Processor) {
			if !reflect.DeepEqual(r, other) {
				t.Errorf("the other processor's row changed:\n got %+v\nwant %+v", r, other)
			}
		} else {
			got = r
		}
	}
	if want := readProcessor(); got.Processor != want {
		t.Errorf("processor %+v, want this machine's %+v", got.Processor, want)
	}
	if got.MeasuredBy != "cmd/bench" || got.Rounds != 1 || got.PeakSeconds != 0.005 || got.Note != "a test" || got.Date == "" || got.Kernels == "" ||
		!strings.HasPrefix(got.BF16Kernels, got.Kernels+", bf16 on ") || got.TorchFP32 != nil || got.TorchBF16 != nil {
		t.Errorf("row %+v", got)
	}
	// With one round the medians are that round's figures: the fraction is
	// the GFLOP/s over the peak, and tokens/s the GFLOP/s over the step's
	// FLOPs per token (within the rounding of the stored figures).
	for _, s := range []Step{got.Tiny, got.Small} {
		if s.Config != "micro" || !(s.GFLOPs > 0) {
			t.Fatalf("step %+v", s)
		}
		// The stored figures are rounded: the fraction to 0.01%, GFLOP/s
		// and the peak to 0.1.
		slack := 0.01 + 100*0.05/got.PeakGFLOPs + 100*s.GFLOPs*0.05/(got.PeakGFLOPs*got.PeakGFLOPs)
		if d := math.Abs(s.PercentOfPeak - 100*s.GFLOPs/got.PeakGFLOPs); d > slack {
			t.Errorf("fraction %v%% but %v GFLOP/s over a peak of %v", s.PercentOfPeak, s.GFLOPs, got.PeakGFLOPs)
		}
		if d := math.Abs(s.TokensPerSecond*microFLOPs/1e9 - s.GFLOPs); d > 0.051 {
			t.Errorf("%v tokens/s but %v GFLOP/s at %d FLOPs a token", s.TokensPerSecond, s.GFLOPs, microFLOPs)
		}
	}
	if got.Tiny.StepsPerRound != 2 || got.Small.StepsPerRound != 1 {
		t.Errorf("steps a round %d and %d, want 2 and 1", got.Tiny.StepsPerRound, got.Small.StepsPerRound)
	}
	if !strings.Contains(stdout, "processor") || !strings.Contains(stdout, got.Processor.String()) {
		t.Errorf("stdout does not name the processor:\n%s", stdout)
	}
	if !strings.Contains(stderr, "round 1 of 1: peak") {
		t.Errorf("stderr shows no round:\n%s", stderr)
	}

	b, err = os.ReadFile(pagePath)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := replaceTable(page, rows)
	if string(b) != want {
		t.Errorf("page:\n%s\nwant:\n%s", b, want)
	}
	if !strings.HasPrefix(string(b), "# Speed\n\nabove\n"+tableStart+"\n") || !strings.HasSuffix(string(b), tableEnd+"\n\nbelow\n") || strings.Contains(string(b), "stale") {
		t.Errorf("the page outside the table changed, or the old table stayed:\n%s", b)
	}
}

// A page without its markers stops the command before it measures, with
// one line on stderr, and neither file changes; so does a speed.json that
// does not parse.
func TestCommandRefusesFilesItCannotUpdate(t *testing.T) {
	dir := t.TempDir()
	jsonPath, pagePath := filepath.Join(dir, "speed.json"), filepath.Join(dir, "speed.md")
	files := map[string]string{jsonPath: "{\"rows\": []}\n", pagePath: "# Speed\n\nno markers\n"}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what, want string) {
		t.Helper()
		code, _, stderr := run(append(microFlags, "--rounds", "1", "--out", jsonPath)...)
		if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "round 1") {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and one line with %q, before any round", what, code, stderr, want)
		}
		for p, s := range files {
			if b, _ := os.ReadFile(p); string(b) != s {
				t.Errorf("%s: %s changed to %q", what, p, b)
			}
		}
	}
	check("no markers", "no table markers")
	files[jsonPath] = "{\"rows\": [\n"
	files[pagePath] = tableStart + "\n" + tableEnd + "\n"
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check("bad JSON", "speed.json")
}

// A page that does not exist yet is created with the table alone.
func TestCommandCreatesPage(t *testing.T) {
	jsonPath := filepath.Join(t.TempDir(), "rows.json")
	if code, _, stderr := run(append(microFlags, "--rounds", "1", "--out", jsonPath)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows, err := readRows(jsonPath)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	b, err := os.ReadFile(strings.TrimSuffix(jsonPath, ".json") + ".md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Speed\n\n" + tableStart + "\n" + table(rows) + tableEnd + "\n"; string(b) != want {
		t.Errorf("page:\n%s\nwant:\n%s", b, want)
	}
}

// Bad flags exit 2 with one line; a config that does not exist exits 1
// with a hint, before anything is measured.
func TestCommandBadInput(t *testing.T) {
	missingTokenizer := filepath.Join(t.TempDir(), "tok.yaml")
	os.WriteFile(missingTokenizer, []byte("model: {d_model: 16, n_layers: 1, n_heads: 2, d_ff: 32, train_len: 16}\ntrain: {batch: 2, steps: 2, lr: 0.01}\ndata: {tokenizer: missing.json}\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--rounds", "0"}, 2, "--rounds must be at least 1"},
		{[]string{"--tiny-steps", "-1"}, 2, "--tiny-steps must be at least 1"},
		{[]string{"--torch-steps", "5"}, 2, "--torch-steps must be at least 6"},
		{[]string{"--peak-time", "0s"}, 2, "--peak-time must be positive"},
		{[]string{"--out", "speed.txt"}, 2, "want a .json file"},
		{[]string{"stray"}, 2, "unexpected argument"},
		{[]string{"--tiny-config", "no/such.yaml"}, 1, "project's root"},
		{[]string{"--small-config", "no/such.yaml"}, 1, "project's root"},
		// A config naming a tokenizer that is not there: no hint about the
		// config's own path, which is right.
		{[]string{"--tiny-config", missingTokenizer}, 1, "missing.json"},
	} {
		code, stdout, stderr := run(append(append([]string{}, microFlags...), c.args...)...)
		if len(c.args) == 2 && c.args[1] == missingTokenizer && strings.Contains(stderr, "project's root") {
			t.Errorf("%v: the hint about the config's path for a missing tokenizer: %q", c.args, stderr)
		}
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, c.code, c.want)
		}
		if strings.Contains(stderr, "round 1") {
			t.Errorf("%v: measured before failing", c.args)
		}
	}
	if code, _, stderr := run("--help"); code != 0 || !strings.Contains(stderr, "-torch-script") {
		t.Errorf("--help: exit %d, %q", code, stderr)
	}
}

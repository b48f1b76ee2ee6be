package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gridConfigs writes two micro configs that differ in the training length
// alone (L = 8 with batch 2, L = 16 with batch 1: equal tokens a step).
func gridConfigs(t *testing.T) (short, long, out string) {
	t.Helper()
	cfg, out := setup(t)
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(cfg)
	short, long = filepath.Join(dir, "short.yaml"), filepath.Join(dir, "long.yaml")
	text := strings.Replace(string(b), "name: micro", "name: micro-8", 1)
	if err := os.WriteFile(short, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	text = strings.Replace(string(b), "name: micro", "name: micro-16", 1)
	text = strings.Replace(text, "train_len: 8", "train_len: 16", 1)
	text = strings.Replace(text, "batch: 2", "batch: 1", 1)
	if err := os.WriteFile(long, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return short, long, out
}

// gridReport is what the grid tests read of report.json.
type gridReport struct {
	Runs []struct {
		Run         string `json:"run"`
		Pos         string `json:"pos"`
		Group       string `json:"group"`
		TrainLen    int    `json:"train_len"`
		TrainTokens int64  `json:"train_tokens"`
		Results     []struct {
			Len int     `json:"len"`
			PPL float64 `json:"ppl"`
		} `json:"results"`
	} `json:"runs"`
}

func readGridReport(t *testing.T, out string) gridReport {
	t.Helper()
	var rep gridReport
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// A grid of two configs x two schemes: runs in <out>/<config>/<pos>, each
// grouped by scheme and L, at equal training tokens, with the sweep table;
// and a grid's run is the run its config trains alone, to the last digit.
func TestExperimentGrid(t *testing.T) {
	short, long, out := gridConfigs(t)
	args := []string{"--config", short + "," + long, "--pos", "alibi,sinusoidal", "--out", out, "--mults", "1,2", "--max-tokens", "100"}
	var o, e bytes.Buffer
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	rep := readGridReport(t, out)
	want := map[string]string{ // group -> run directory
		"alibi L=8": "micro-8/alibi", "sinusoidal L=8": "micro-8/sinusoidal",
		"alibi L=16": "micro-16/alibi", "sinusoidal L=16": "micro-16/sinusoidal",
	}
	if len(rep.Runs) != len(want) {
		t.Fatalf("report has %d runs, want %d", len(rep.Runs), len(want))
	}
	md := o.String()
	for _, r := range rep.Runs {
		if dir := want[r.Group]; r.Run != filepath.Join(out, dir) {
			t.Errorf("group %q is run %s, want %s", r.Group, r.Run, filepath.Join(out, dir))
		}
		if r.TrainTokens != 4*16 { // 4 steps of 2 x 8 or 1 x 16
			t.Errorf("%s: train_tokens %d, want 64", r.Run, r.TrainTokens)
		}
		if len(r.Results) != 2 || r.Results[0].Len != r.TrainLen || r.Results[1].Len != 2*r.TrainLen {
			t.Fatalf("%s: results %+v, want lengths L and 2L of L = %d", r.Run, r.Results, r.TrainLen)
		}
		// The sweep table's row of this L holds this run's perplexities.
		row := fmt.Sprintf("| %d | %.3f | %.3f |", r.TrainLen, r.Results[0].PPL, r.Results[1].PPL)
		section := md[strings.Index(md, r.Pos+" by training length L"):]
		if !strings.Contains(section, row) {
			t.Errorf("the %s sweep lacks the row %q:\n%s", r.Pos, row, md)
		}
	}
	for _, s := range []string{"# Grid: alibi, sinusoidal", "alibi by training length L", "sinusoidal by training length L", "| alibi L=16 | 16 | 64 |"} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
	// The L = 16 config alone, with ALiBi only: the same numbers.
	alone := filepath.Join(filepath.Dir(out), "alone")
	o.Reset()
	if code := command([]string{"--config", long, "--pos", "alibi", "--out", alone, "--mults", "1,2", "--max-tokens", "100"}, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	single := readGridReport(t, alone)
	for _, r := range rep.Runs {
		if r.Group == "alibi L=16" {
			for i, x := range r.Results {
				if y := single.Runs[0].Results[i]; x != y {
					t.Errorf("grid's alibi L=16 at %d: %v, alone %v", x.Len, x.PPL, y.PPL)
				}
			}
		}
	}
}

// An experiment file trains each config's own schemes only, and the report
// is built again from them with --report-only.
func TestExperimentGridFile(t *testing.T) {
	short, long, out := gridConfigs(t)
	file := filepath.Join(filepath.Dir(out), "grid.yaml")
	text := fmt.Sprintf("runs:\n  - config: %s\n    pos: alibi\n  - config: %s\n    pos: sinusoidal, alibi\n", short, long)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--grid", file, "--out", out, "--mults", "1,2", "--max-tokens", "100"}
	var o, e bytes.Buffer
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	if _, err := os.Stat(filepath.Join(out, "micro-8", "sinusoidal")); !os.IsNotExist(err) {
		t.Errorf("micro-8/sinusoidal exists (%v): the file asks for alibi only", err)
	}
	var groups []string
	for _, r := range readGridReport(t, out).Runs {
		groups = append(groups, r.Group)
	}
	if got := strings.Join(groups, ", "); got != "alibi L=8, sinusoidal L=16, alibi L=16" {
		t.Errorf("groups %s, want alibi L=8, sinusoidal L=16, alibi L=16", got)
	}
	first := o.String()
	o.Reset()
	if code := command(append(args, "--report-only"), &o, &e); code != 0 {
		t.Fatalf("--report-only: exit %d: %s", code, e.String())
	}
	if !strings.Contains(o.String(), "go run ./cmd/experiment --grid "+file) || o.String() != first {
		t.Errorf("--report-only gave another report, or one without the --grid command:\n%s", o.String())
	}
}

func TestExperimentGridBadInput(t *testing.T) {
	short, long, out := gridConfigs(t)
	dir := filepath.Dir(out)
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknown := write("unknown.yaml", "runs:\n  - config: "+short+"\n    schemes: alibi\n")
	empty := write("empty.yaml", "# nothing\n")
	noPos := write("nopos.yaml", "runs:\n  - config: "+short+"\n")
	good := write("good.yaml", "runs:\n  - config: "+short+"\n    pos: alibi\n")
	twice := write("twice.yaml", "runs:\n  - config: "+short+"\n    pos: alibi\n    pos: rope\n")
	listPos := write("list.yaml", "runs:\n  - config: "+short+"\n    pos: [alibi, rope]\n")
	notList := write("notlist.yaml", "runs: "+short+"\n")
	topTypo := write("toptypo.yaml", "run:\n  - config: "+short+"\n    pos: alibi\n")
	tab := write("tab.yaml", "runs:\n\t- config: "+short+"\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		// Errors in the config files' form: the line, and the key.
		{[]string{"--grid", unknown}, "unknown.yaml: line 3: unknown key \"schemes\""},
		{[]string{"--grid", twice}, "twice.yaml: line 4: key \"pos\" appears twice"},
		{[]string{"--grid", listPos}, "list.yaml: line 3: pos of run 1 must be a string, such as alibi,sinusoidal"},
		{[]string{"--grid", notList}, "notlist.yaml: line 1: runs must be a list of config: and pos: entries"},
		{[]string{"--grid", topTypo}, "toptypo.yaml: line 1: unknown key \"run\""},
		{[]string{"--grid", tab}, "tab.yaml: yaml: line 2: found character that cannot start any token"},
		{[]string{"--grid", empty}, "no runs"},
		{[]string{"--grid", noPos}, "nopos.yaml: line 2: run 1 needs both a config and a pos entry"},
		{[]string{"--grid", filepath.Join(dir, "absent.yaml")}, "--grid: open"},
		{[]string{"--grid", good, "--pos", "alibi"}, "give it without --config and --pos"},
		{[]string{"--config", short + "," + short}, `are both named "micro-8"`},
		{[]string{"--config", short + "," + long, "--pos", "alibi,alibi"}, "--pos of " + short + " lists alibi twice"},
		{[]string{"--config", short + "," + long, "--pos", "alibi", "--strides", "1,1/2"}, "take one config, not a grid"},
		{[]string{"--config", short + "," + long, "--pos", "alibi", "--mults", "1,100"}, "too long for the validation split of " + short},
	} {
		var o, e bytes.Buffer
		code := command(append(c.args, "--out", out), &o, &e)
		if code == 0 || !strings.Contains(e.String(), c.want) || strings.Count(e.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want one line containing %q", c.args, code, e.String(), c.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("bad input created %s", out)
	}
}

// A grid in two shards gives the one-process report (without timings),
// its run paths aside.
func TestExperimentGridShards(t *testing.T) {
	short, long, out := gridConfigs(t)
	one, two := out+"-one", out+"-two"
	base := []string{"--config", short + "," + long, "--pos", "alibi,sinusoidal", "--mults", "1,2", "--max-tokens", "100", "--no-timings"}
	run := func(args ...string) string {
		var o, e bytes.Buffer
		if code := command(append(append([]string(nil), base...), args...), &o, &e); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e.String())
		}
		return o.String()
	}
	want := run("--out", one)
	run("--out", two, "--shard", "1/2")
	run("--out", two, "--shard", "2/2")
	got := run("--out", two, "--report-only")
	if strings.ReplaceAll(got, two, one) != want {
		t.Errorf("sharded report:\n%s\none process:\n%s", got, want)
	}
	a, err := os.ReadFile(filepath.Join(one, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(two, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.ReplaceAll(string(b), two, one) != string(a) {
		t.Error("sharded report.json differs from the one-process one")
	}
}

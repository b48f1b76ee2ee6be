package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alibi-go/alibi/train"
)

// The cost measurement trains every scheme once per round, in its own
// directory, reports each round's figures as the runs' summaries have
// them, and reuses finished rounds.
func TestExperimentCost(t *testing.T) {
	cfg, out := setup(t)
	args := []string{"--config", cfg, "--pos", "alibi,rope", "--out", out, "--cost-steps", "3", "--cost-rounds", "2"}
	var o, e bytes.Buffer
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "cost.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Steps, Rounds int
		Rows          []struct {
			Label           string    `json:"label"`
			Params          int       `json:"params"`
			TokensPerSecond []float64 `json:"tokens_per_second"`
			PeakRSSBytes    []int64   `json:"peak_rss_bytes"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Steps != 3 || rep.Rounds != 2 || len(rep.Rows) != 2 || rep.Rows[0].Label != "alibi" || rep.Rows[1].Label != "rope" {
		t.Fatalf("cost.json: %s", b)
	}
	for _, row := range rep.Rows {
		for k := 1; k <= 2; k++ {
			s, err := train.ReadSummary(filepath.Join(out, "cost", row.Label, fmt.Sprintf("round%d", k)))
			if err != nil {
				t.Fatal(err)
			}
			if s.Steps != 3 || s.TokensPerSecond != row.TokensPerSecond[k-1] || s.PeakRSSBytes != row.PeakRSSBytes[k-1] || s.Params != row.Params {
				t.Errorf("%s round %d: summary %+v, report %v tokens/s, %v bytes", row.Label, k, s, row.TokensPerSecond, row.PeakRSSBytes)
			}
		}
	}
	first := o.String()
	e.Reset()
	o.Reset()
	if code := command(args, &o, &e); code != 0 || strings.Count(e.String(), "reusing round") != 4 || o.String() != first {
		t.Errorf("second call: exit %d, stderr %q; want every round reused and the same report", code, e.String())
	}
}

func TestExperimentCostBadInput(t *testing.T) {
	cfg, out := setup(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cost-steps", "3", "--cost-rounds", "0"}, "--cost-rounds must be positive"},
		{[]string{"--cost-steps", "-1"}, "must be positive"},
		{[]string{"--cost-steps", "3", "--seeds", "1,2"}, "give it without --seeds"},
		{[]string{"--cost-steps", "3", "--mults", "1,2"}, "give it without --mults"},
	} {
		var o, e bytes.Buffer
		code := command(append(c.args, "--config", cfg, "--out", out), &o, &e)
		if code == 0 || !strings.Contains(e.String(), c.want) || strings.Count(e.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want one line containing %q", c.args, code, e.String(), c.want)
		}
	}
}

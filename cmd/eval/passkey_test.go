package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPasskeyTask(t *testing.T) {
	dir, _ := trainedRun(t)
	tmp := t.TempDir()
	jsonPath, plotPath := filepath.Join(tmp, "p.json"), filepath.Join(tmp, "p.png")
	var out, errb bytes.Buffer
	code := command([]string{"--run", dir, "--task", "passkey", "--distances", "40,100", "--episodes", "3", "--depths", "0,1",
		"--json", jsonPath, "--plot", plotPath}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"| 40 |", "| 100 |", "| effective context |", "Passkey retrieval"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	var rep struct {
		Runs []struct {
			Pos    string    `json:"pos"`
			Depths []float64 `json:"depths"`
			Points []struct {
				Distance, Episodes int
				ByDepth            []struct{ Episodes int } `json:"by_depth"`
			} `json:"points"`
		} `json:"runs"`
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Pos != "alibi" || len(rep.Runs[0].Points) != 2 || rep.Runs[0].Points[1].Distance != 100 ||
		rep.Runs[0].Points[0].Episodes != 3 || rep.Runs[0].Points[0].ByDepth[0].Episodes != 2 || len(rep.Runs[0].Depths) != 2 {
		t.Errorf("report %s", b)
	}
	if fi, err := os.Stat(plotPath); err != nil || fi.Size() < 1000 {
		t.Errorf("plot: %v", err)
	}
}

func TestPasskeyTaskFlagErrors(t *testing.T) {
	dir, _ := trainedRun(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "recall"}, `--task must be perplexity, passkey, mqar or multikey, got "recall"`},
		{[]string{"--task", "passkey", "--len", "64"}, "--len is a flag of --task perplexity"},
		{[]string{"--distances", "64"}, "--distances is a flag of --task passkey"},
		{[]string{"--task", "passkey", "--distances", "64,x"}, `--distances: "x" is not a positive integer`},
		{[]string{"--task", "passkey", "--distances", "20"}, "distance 20 is shorter than the question (38 bytes)"},
		{[]string{"--task", "passkey", "--depths", "2"}, `--depths: "2" is not a depth in [0, 1]`},
		{[]string{"--task", "passkey", "--episodes", "0"}, "--episodes must be positive, got 0"},
		{[]string{"--task", "passkey", "--distances", "100000"}, "distance 100000 needs 99962 bytes of filler"},
	} {
		var out, errb bytes.Buffer
		code := command(append([]string{"--run", dir}, c.args...), &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), c.want) || strings.Count(strings.TrimSpace(errb.String()), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q, want one line with %q", c.args, code, errb.String(), c.want)
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The context lenses run for every scheme, land in the report and in
// context.json, and are reused by a second call.
func TestExperimentContextLenses(t *testing.T) {
	cfg, out := setup(t)
	args := []string{"--config", cfg, "--pos", "alibi,rope", "--out", out, "--mults", "1,2", "--max-tokens", "100",
		"--strides", "1/2,1/8,1tok", "--attention-stats", "--passkey", "40,60", "--passkey-episodes", "2"}
	var o, e bytes.Buffer
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	for _, want := range []string{"## Does the model use the context?", "### Retrieval at a distance (passkey)", "| 40 |", "| 60 |",
		"| distance | alibi by depth (0, 0.5, 1) | rope by depth (0, 0.5, 1) |",
		"effective context", "--passkey 40,60 --passkey-episodes 2",
		"### Stride sweep", "| 8 (1x L) | non-overlapping |", "| 8 (1x L) | stride 4 (len/2) |", "| 16 (2x L) | stride 1 |", "--strides 1/2,1/8,1tok", "| 16 (2x L) | stride 2 (len/8) |",
		"### Attention past L", "| 16 | 0 |", "--attention-stats"} {
		if !strings.Contains(o.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, o.String())
		}
	}
	var ctx struct {
		Strides struct {
			Runs []struct {
				Pos     string `json:"pos"`
				Results []struct {
					Len, Stride, Tokens int
					Protocol            string
				} `json:"results"`
			} `json:"runs"`
		} `json:"strides"`
		Attention struct {
			Runs []struct {
				Results []struct {
					Len, Queries int
				} `json:"results"`
			} `json:"runs"`
		} `json:"attention"`
		Passkey struct {
			Runs []struct {
				Pos    string `json:"pos"`
				Points []struct {
					Distance, Episodes int
				} `json:"points"`
			} `json:"runs"`
		} `json:"passkey"`
	}
	b, err := os.ReadFile(filepath.Join(out, "context.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ctx); err != nil {
		t.Fatal(err)
	}
	if r := ctx.Passkey.Runs; len(r) != 2 || r[0].Pos != "alibi" || r[1].Pos != "rope" || len(r[1].Points) != 2 || r[1].Points[1].Distance != 60 || r[1].Points[1].Episodes != 2 {
		t.Errorf("context.json: %s", b)
	}
	// At 8, 1/8 is the stride 1 of 1tok: evaluated once, listed once.
	if r := ctx.Strides.Runs; len(r) != 2 || len(r[1].Results) != 7 || r[1].Results[2].Stride != 1 || r[1].Results[6].Len != 16 || r[1].Results[6].Stride != 1 || r[1].Results[6].Tokens != 100 {
		t.Errorf("context.json strides: %s", b)
	}
	if n := strings.Count(e.String(), "alibi len 8 stride 1:"); n != 1 {
		t.Errorf("stride 1 at length 8 evaluated %d times:\n%s", n, e.String())
	}
	// 100 tokens: windows of 16 at 2x L = 8, six full and one of 4; 8 queries past L in each full one.
	if r := ctx.Attention.Runs; len(r) != 2 || len(r[0].Results) != 2 || r[0].Results[0].Queries != 0 || r[0].Results[1].Queries != 6*8 {
		t.Errorf("context.json attention: %s", b)
	}
	if fi, err := os.Stat(filepath.Join(out, "context.png")); err != nil || fi.Size() < 1000 {
		t.Errorf("context.png: %v", err)
	}
	pk, _ := os.ReadFile(filepath.Join(out, "alibi", "passkey.json"))
	e.Reset()
	if code := command(args, &o, &e); code != 0 {
		t.Fatalf("second call: exit %d: %s", code, e.String())
	}
	if strings.Contains(e.String(), "passkey: effective context") {
		t.Errorf("second call evaluated passkey again:\n%s", e.String())
	}
	if again, _ := os.ReadFile(filepath.Join(out, "alibi", "passkey.json")); !bytes.Equal(again, pk) {
		t.Error("reusing the passkey evaluation rewrote it")
	}
	// Other distances: evaluated again; --report-only without them: not ready.
	e.Reset()
	if code := command(append(args[:len(args)-4:len(args)-4], "--passkey", "40", "--report-only"), &o, &e); code == 0 || !strings.Contains(e.String(), "no passkey evaluation at these distances") {
		t.Errorf("report-only with other distances: exit %d, %s", code, e.String())
	}
}

func TestExperimentContextBadInput(t *testing.T) {
	cfg, _ := setup(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--passkey", "20"}, `--passkey 20 is shorter than the question, 38 tokens long`},
		{[]string{"--strides", "1,1/3,2"}, `--strides: stride "2": want 1 (non-overlapping), 1/k`},
		{[]string{"--passkey", "40,40"}, "--passkey lists 40 twice"},
		{[]string{"--passkey", "40", "--passkey-episodes", "0"}, "--passkey-episodes must be positive"},
		{[]string{"--passkey", "100000"}, "--passkey 100000 needs 99962 tokens of filler in one piece, the training split has"},
	} {
		var o, e bytes.Buffer
		code := command(append([]string{"--config", cfg}, tc.args...), &o, &e)
		if code == 0 || !strings.Contains(e.String(), tc.want) {
			t.Errorf("%v: exit %d, %q; want %q", tc.args, code, e.String(), tc.want)
		}
	}
}

// A signal during an evaluation ends the command at once with exit status
// 130, keeping the evaluations already saved; the same command run again
// continues from them.
func TestInterruptDuringEvaluation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command in a subprocess")
	}
	cfg, out := setup(t)
	args := []string{"--config", cfg, "--pos", "alibi", "--out", out, "--mults", "1,2", "--max-tokens", "100",
		"--passkey", "700", "--passkey-episodes", "1000000"} // the passkey evaluation would take hours
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ALIBI_EXPERIMENT_MAIN=1")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	evalJSON := filepath.Join(out, "alibi", "eval.json")
	deadline := time.Now().Add(60 * time.Second)
	for { // both lengths evaluated: the passkey evaluation is under way
		if b, err := os.ReadFile(evalJSON); err == nil && bytes.Count(b, []byte(`"len"`)) == 2 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no evaluation after 60 s:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	killer := time.AfterFunc(15*time.Second, func() { cmd.Process.Kill() })
	defer killer.Stop()
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 || time.Since(start) > 10*time.Second {
		t.Fatalf("after the signal: %v (%v later), want exit status 130 at once:\n%s", err, time.Since(start), logs.String())
	}
	if !strings.Contains(logs.String(), "interrupted during an evaluation") {
		t.Errorf("no message:\n%s", logs.String())
	}
	if b, err := os.ReadFile(evalJSON); err != nil || bytes.Count(b, []byte(`"len"`)) != 2 {
		t.Errorf("the saved evaluations were lost: %v %s", err, b)
	}
}

package clitest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseHelp(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	fs.Bool("v", false, "a one-letter boolean: its usage on the same line")
	fs.Bool("resume", false, "a boolean")
	fs.Int("steps", 3, "an int")
	fs.Int64("seed", -1, "an int64")
	fs.Uint64("episodes", 1, "a uint64")
	fs.Float64("top-p", 1, "a float64")
	fs.String("config", "configs/tiny.yaml", "a string\nover two lines")
	fs.Duration("wait", time.Second, "a duration")
	fs.Var(&checkedValue{typ: "int"}, "run", "a value of its own")
	fs.String("out", "", "a string whose usage names its `DIR`")
	fs.PrintDefaults()
	got := ParseHelp("flags:\n" + buf.String())
	want := []Flag{{"config", "string"}, {"episodes", "uint"}, {"out", "DIR"}, {"resume", ""}, {"run", "value"},
		{"seed", "int"}, {"steps", "int"}, {"top-p", "float"}, {"v", ""}, {"wait", "duration"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseHelp:\n got %v\nwant %v\nof:\n%s", got, want, buf.String())
	}
}

func TestDocCommandsMarkdown(t *testing.T) {
	md := "# Title\n" +
		"\n" +
		"```sh\n" +
		"go run ./cmd/train --config configs/tiny.yaml   # trains runs/tiny\n" +
		"go run ./cmd/experiment --config configs/tiny.yaml \\\n" +
		"  --pos alibi,none \\\n" +
		"  --out runs/x\n" +
		"go run ./cmd/generate --prompt \"Light is\" --tokens 50 > out.txt\n" +
		"```\n" +
		"\n" +
		"Usage: `go run ./cmd/eval [--run DIR ...] [--len N]` evaluates, and\n" +
		"`go run ./cmd/train --out DIR\n" +
		"--resume` resumes; `cmd/eval --stride 1` is not a go run line.\n" +
		"\n" +
		"  ~~~\n" +
		"  x=$(go run ./cmd/eval --len 2048) && echo done\n" +
		"  ~~~\n" +
		"```\n" +
		"go run ./cmd/generate --prompt 'a # b' # a comment\n" +
		"```\n"
	got := DocCommands("README.md", md)
	want := []DocCommand{
		{File: "README.md", Line: 4, Name: "train", Args: []string{"--config", "configs/tiny.yaml"}},
		{File: "README.md", Line: 5, Name: "experiment", Args: []string{"--config", "configs/tiny.yaml", "--pos", "alibi,none", "--out", "runs/x"}},
		{File: "README.md", Line: 8, Name: "generate", Args: []string{"--prompt", "Light is", "--tokens", "50"}},
		{File: "README.md", Line: 11, Name: "eval", Args: []string{"[--run", "DIR", "...]", "[--len", "N]"}, Usage: true},
		{File: "README.md", Line: 12, Name: "train", Args: []string{"--out", "DIR", "--resume"}},
		{File: "README.md", Line: 16, Name: "eval", Args: []string{"--len", "2048"}},
		{File: "README.md", Line: 19, Name: "generate", Args: []string{"--prompt", "a # b"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DocCommands:\n got %+v\nwant %+v", got, want)
	}
}

func TestDocCommandsGo(t *testing.T) {
	src := "// Command eval does things.\n" +
		"//\n" +
		"//\tgo run ./cmd/eval [--len N] [--task passkey|perplexity]\n" +
		"//\n" +
		"// Prose: go run ./cmd/eval --nothing is not read here.\n" +
		"//\n" +
		"//\tgo run ./cmd/eval --run runs/a \\\n" +
		"//\t  --len 2048\n" +
		"//\t--len N\n" +
		"//\t\tAlso evaluate at length N.\n" +
		"package main\n"
	got := DocCommands("cmd/eval/doc.go", src)
	want := []DocCommand{
		{File: "cmd/eval/doc.go", Line: 3, Name: "eval", Args: []string{"[--len", "N]", "[--task", "passkey|perplexity]"}, Usage: true},
		{File: "cmd/eval/doc.go", Line: 7, Name: "eval", Args: []string{"--run", "runs/a", "--len", "2048"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DocCommands:\n got %+v\nwant %+v", got, want)
	}
}

func TestCheckArgs(t *testing.T) {
	flags := []Flag{{"run", "value"}, {"len", "int"}, {"seed", "uint"}, {"extend-factor", "float"}, {"attention-stats", ""}, {"json", "string"}}
	for _, tc := range []struct {
		args  string
		usage bool
		ok    bool
	}{
		{"--run runs/tiny --len 2048 --json r.json", false, true},
		{"--len=2048 --attention-stats --seed 3 --extend-factor 1.5", false, true},
		{"--attention-stats=false --len N --json FILE.png", false, true}, // placeholders
		{"--len $LEN $MORE --json x", false, true},                       // shell expansions
		{"--help", false, true},
		{"--lens 2048", false, false},           // an unknown flag
		{"--len", false, false},                 // a value missing
		{"--len many", false, false},            // not an int
		{"--seed -1", false, false},             // not a uint
		{"--extend-factor x2", false, false},    // not a float
		{"--attention-stats yes", false, false}, // a stray argument after a boolean
		{"runs/tiny", false, false},             // a stray argument
		{"[--run DIR ...] [--len N] [--json FILE] (--attention-stats)", true, true},
		{"[--run DIR ...] [--lens a,b,c]", true, false},
		{"--len N [--max-memory=SIZE]", true, false},
	} {
		c := DocCommand{Name: "eval", Args: strings.Fields(tc.args), Usage: tc.usage}
		if err := CheckArgs(flags, c); (err == nil) != tc.ok {
			t.Errorf("CheckArgs(%q, usage %v) = %v, want ok %v", tc.args, tc.usage, err, tc.ok)
		}
	}
}

// Every command the documentation runs exists, and every command has its
// reference, a doc.go whose documentation test (doc_test.go) calls
// CheckDocs.
func TestEveryCommandDocumented(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := DocFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		for _, c := range DocCommands(rel, string(b)) {
			if _, err := os.Stat(filepath.Join(root, "cmd", c.Name, "main.go")); err != nil {
				t.Errorf("%s:%d: %s: no command cmd/%s", c.File, c.Line, c, c.Name)
			}
		}
	}
	mains, err := filepath.Glob(filepath.Join(root, "cmd", "*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(mains) == 0 {
		t.Fatal("no command found under cmd/")
	}
	for _, m := range mains {
		dir := filepath.Dir(m)
		name := filepath.Base(dir)
		if _, err := os.Stat(filepath.Join(dir, "doc.go")); err != nil {
			t.Errorf("cmd/%s has no doc.go, its reference (see CheckFlagReference)", name)
		}
		b, err := os.ReadFile(filepath.Join(dir, "doc_test.go"))
		if err != nil || !strings.Contains(string(b), `clitest.CheckDocs(t, "`+name+`", command)`) {
			t.Errorf("cmd/%s/doc_test.go does not call clitest.CheckDocs(t, %q, command)", name, name)
		}
	}
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/alibi-go/alibi/cmd/internal/cli"
	"github.com/alibi-go/alibi/data"
	"github.com/alibi-go/alibi/eval"
	"github.com/alibi-go/alibi/layers/position"
	"github.com/alibi-go/alibi/model"
	"github.com/alibi-go/alibi/model/gguf"
	"github.com/alibi-go/alibi/model/osutil"
)

const summary = `export: write a trained model as a GGUF file that llama.cpp (and Ollama, LM Studio, node-llama-cpp) runs.

example: go run ./cmd/export --run runs/tiny --out runs/tiny.gguf`

func main() {
	cli.TuneGC()
	os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
}

func command(args []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "export: "+format+"\n", a...)
		return 1
	}
	flags := cli.NewFlagSet("export", summary, stderr)
	runDir := flags.String("run", "runs/tiny", "run directory to export: a finished run's final checkpoint, an unfinished one's newest good one")
	ckpt := flags.String("checkpoint", "", "checkpoint file to export, instead of --run")
	out := flags.String("out", "", "the GGUF file to write (required)")
	force := flags.Bool("force", false, "replace --out if it exists")
	typ := flags.String("type", "f32", "type of the matrices: f32 (exact), f16 or q8_0 (ggml's 8-bit blocks)")
	context := flags.Int("context", 0, "context length the file declares: llama.cpp's default context, and for a sinusoidal model the rows of its position table, past which llama.cpp cannot go (0, the default: the training length, times --extend-factor)")
	extend := flags.String("extend", "", "write the model with an evaluation-time extension that llama.cpp has: pi (linear rope scaling) or ntk (a larger rotary base) for a rope run")
	extendFactor := flags.Float64("extend-factor", 0, "the extension's factor, at least 1 (required with --extend)")
	tokenizerPath := flags.String("tokenizer", "", "the run's tokenizer.json (default: the run's own, beside its checkpoints); a checkpoint trained with another tokenizer is refused")
	if code, ok := cli.Parse(flags, args); !ok {
		return code
	}
	set := cli.Set(flags)
	if *out == "" {
		return fail("--out is required: the GGUF file to write, e.g. --out runs/tiny.gguf")
	}
	t, err := gguf.ParseType(*typ)
	if err != nil {
		return fail("--type: %v", err)
	}
	if *context < 0 || *context > math.MaxUint32 {
		return fail("--context must be positive and fit in 32 bits (0: the default), got %d", *context)
	}
	if *extend != "" {
		e, err := position.LookupExtension(*extend)
		switch {
		case err != nil:
			return fail("--extend %q is not an extension llama.cpp has: it has pi (linear rope scaling) and ntk (a larger rotary base), for rope runs", *extend)
		case *extend == "interp":
			return fail("--extend interp has no counterpart in llama.cpp: the interpolated slopes m/F are not llama.cpp's for any max bias")
		}
		if _, dynamic := e.(position.DynamicExtension); dynamic {
			return fail("--extend %s has no counterpart in llama.cpp: its factor follows the length of the sequence, and llama.cpp's rope scaling has a fixed one", *extend)
		}
	}
	if set["extend-factor"] != set["extend"] {
		return fail("--extend and --extend-factor go together: llama.cpp's extensions have a fixed factor")
	}
	if set["extend-factor"] && !(*extendFactor >= 1 && !math.IsInf(*extendFactor, 1)) {
		return fail("--extend-factor must be at least 1 and finite, got %v", *extendFactor)
	}
	if set["checkpoint"] && set["run"] {
		return fail("give --run or --checkpoint, not both")
	}
	if err := checkOutput(*out, *force); err != nil { // before the work
		return fail("%v", err)
	}

	var trained *eval.Trained
	if set["checkpoint"] {
		trained, err = cli.OpenCheckpoint("export", *ckpt)
	} else {
		trained, err = cli.OpenRun("export", *runDir, stderr)
	}
	if err != nil {
		return fail("%v", err)
	}
	if *tokenizerPath != "" {
		tok, err := data.LoadTokenizer(*tokenizerPath)
		if err != nil {
			return fail("--tokenizer: %v", err)
		}
		if err := trained.UseTokenizer(tok, *tokenizerPath); err != nil {
			return fail("%v", err)
		}
	}
	tok, err := trained.RunTokenizer()
	if err != nil {
		return fail("%v", err)
	}
	if err := notOfTheRun(*out, trained.Weights.Checkpoint); err != nil {
		return fail("%v", err)
	}
	if *extend != "" {
		if err := trained.Model.Extend(*extend, *extendFactor); err != nil {
			return fail("%s: --extend: %v", trained.Name, err)
		}
	}
	src := gguf.Source{Model: trained.Model, Tokenizer: tok, Name: trained.Label(), Checkpoint: trained.Weights.Checkpoint,
		Step: trained.Weights.Step, Steps: trained.Weights.Steps, Finished: trained.Weights.Final(), Meta: trained.Meta}
	file, s, err := gguf.Build(src, gguf.Options{Type: t, Context: *context})
	if err != nil {
		return fail("%s: %v", trained.Name, err)
	}
	var buf bytes.Buffer
	if _, err := file.WriteTo(&buf); err != nil {
		return fail("%s: %v", trained.Name, err)
	}
	if err := osutil.WriteFileAtomic(*out, buf.Bytes()); err != nil {
		return fail("write %s: %v", *out, err)
	}
	fmt.Fprintf(stderr, "weights: %s\n", trained.Weights.Describe())
	for _, note := range s.Notes {
		fmt.Fprintf(stderr, "note: %s\n", note)
	}
	fmt.Fprintf(stdout, "%s: %s as llama.cpp's %s, %v, %d tensors, %s, context %d tokens, tokenizer %v\n",
		*out, trained.Label(), s.Architecture, s.Type, s.Tensors, osutil.FormatBytes(int64(buf.Len())), s.Context, tok)
	return 0
}

// notOfTheRun refuses an --out that would replace a file of the run being
// exported: the checkpoint read, or any file already in its run directory
// (another checkpoint, its tokenizer.json, its summary).
func notOfTheRun(out, checkpoint string) error {
	oi, err := os.Stat(out)
	if err != nil {
		return nil // a new file
	}
	if ci, err := os.Stat(checkpoint); err == nil && os.SameFile(oi, ci) {
		return fmt.Errorf("--out %s is the checkpoint being exported: write the GGUF file elsewhere", out)
	}
	run := filepath.Dir(filepath.Dir(checkpoint)) // <run>/checkpoints/step-N.safetensors
	if filepath.Base(filepath.Dir(checkpoint)) != model.CheckpointDir {
		return nil
	}
	absRun, err1 := filepath.Abs(run)
	absOut, err2 := filepath.Abs(out)
	if err1 == nil && err2 == nil {
		if rel, err := filepath.Rel(absRun, absOut); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("--out %s is a file of the run %s: write the GGUF file elsewhere, or to a new name", out, run)
		}
	}
	return nil
}

// kind names what a path that is not a regular file is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// checkOutput checks, before the work, that path can be written: an
// existing path is kept unless force; one that is not a regular file (a
// directory, a device, a pipe, a symbolic link) is never replaced; its
// directory must let a file be made (osutil.CheckOutput).
func checkOutput(path string, force bool) error {
	fi, err := os.Lstat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("--out %s is %s, not a regular file: write the GGUF file to another path", path, kind(fi.Mode()))
	case err == nil && !force:
		return fmt.Errorf("--out %s exists; give --force to replace it", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--out %s: %v", path, osutil.PathReason(err))
	}
	if err := osutil.CheckOutput(path); err != nil {
		return fmt.Errorf("--out %w", err)
	}
	return nil
}

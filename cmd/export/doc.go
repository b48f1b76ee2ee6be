// Command export writes a trained model as a GGUF file, the format that
// llama.cpp and the tools built on it (Ollama, LM Studio, node-llama-cpp)
// run.
//
// Usage:
//
//	go run ./cmd/export [--run DIR | --checkpoint FILE] --out FILE [--type f32|f16|q8_0] [--context N] \
//	    [--extend pi|ntk --extend-factor F] [--tokenizer FILE] [--force]
//
// The model is a run directory's (--run, default runs/tiny): the final
// checkpoint of a finished run, or the newest checkpoint that loads of one
// that has not finished (its file then says so, in general.name and
// alibi_go.finished); or one checkpoint file. Its position scheme decides
// the llama.cpp architecture, exactly or not at all (go doc ./model/gguf):
//
//	alibi       mpt with the max_alibi_bias that gives the model's slopes
//	none        mpt without ALiBi
//	rope        gptneox (the whole head rotated in the half-split layout, base 10000)
//	sinusoidal  gpt2 with the table of --context positions: llama.cpp cannot go past them
//
// t5, kerple, fire, fox, stick-breaking, pope and log-length scaling have no counterpart in
// llama.cpp and are refused, in one line that says why. The tokenizer is
// the run's, as llama.cpp's byte-level BPE vocabulary: llama.cpp encodes a
// text to the ids the project does. --help prints the flags.
//
// # Flags
//
//	--run DIR
//		The run directory to export: a finished run's final checkpoint, an
//		unfinished one's newest checkpoint that loads. Default runs/tiny.
//	--checkpoint FILE
//		A checkpoint file to export, instead of --run (not both).
//	--out FILE
//		The GGUF file to write. Required. It is written beside itself and
//		renamed into place once complete; its directory is checked before
//		the model is read.
//	--force
//		Replace --out if it exists. Without it an existing file is kept;
//		a path that is not a regular file (a directory, a device, a
//		symbolic link) is never replaced, nor the checkpoint being read or
//		any file already in its run directory.
//	--type f32|f16|q8_0
//		The type of the matrices: f32 (default; the model exactly), f16
//		(half the size) or q8_0 (ggml's blocks of 32 int8 values and a
//		scale; under a third). Biases, LayerNorm and the sinusoidal table
//		stay f32. What each costs in perplexity is in the README. The
//		llama.cpp of node-llama-cpp 3.21.1 was seen to lose a q8_0 model of
//		d_model 32 (configs/micro.yaml) after 64 tokens, on an Intel Xeon
//		with AMX; d_model 64 and up ran as they should.
//	--context N
//		The context length the file declares: llama.cpp's default context,
//		and for a sinusoidal model the rows of its position table (at most
//		1 GiB of them). 0, the default: the training length, times
//		--extend-factor. An ALiBi, rope or none model runs in llama.cpp at
//		any context whatever this says.
//	--extend pi|ntk
//		Write a rope model with an evaluation-time extension that llama.cpp
//		computes the same way: pi as linear rope scaling, ntk as the larger
//		rotary base. yarn (its ramp differs from llama.cpp's), dynamic-ntk
//		and interp (slopes that no max bias gives) are refused.
//	--extend-factor F
//		The extension's factor, at least 1. Required with --extend.
//	--tokenizer FILE
//		The tokenizer.json the model was trained with, for a checkpoint
//		outside its run directory; one whose hash is not the one the
//		checkpoint names is refused.
//
// # Output
//
// Standard error names the checkpoint read (its step, its run's steps and
// whether the run finished) and says how the model was mapped; standard
// output gets one line: the file, the model, the architecture, the type,
// the tensors, the size, the context and the tokenizer.
//
//	runs/tiny.gguf: runs/tiny as llama.cpp's mpt, f32, 52 tensors, 3 MB, context 128 tokens, tokenizer bytes (256 tokens)
//
// The file's metadata says what made it: general.name and
// general.description, and under alibi_go. the scheme, the training length,
// the model and training configs, the tokenizer and its hash, the corpus
// and its SHA-256, the checkpoint, its step and steps, and whether the run
// finished.
//
// # Exit status
//
//	0  the file was written, or --help was asked for
//	1  an error, in one line on standard error, with --out left as it was:
//	   no --out, an existing --out without --force, one that is not a regular
//	   file or cannot be written, a bad --type, --context or --extend-factor,
//	   a run that does not load, a finished run whose final checkpoint
//	   cannot be read, a corrupt checkpoint, a scheme or extension llama.cpp
//	   has no counterpart for, a tokenizer it would encode otherwise
//	2  a malformed command line: an unknown flag, a missing or mistyped value,
//	   an argument that is not a flag
package main

// Package gguf writes a trained model as a GGUF file (version 3), the
// format llama.cpp and the tools built on it (Ollama, LM Studio,
// node-llama-cpp) run, and reads such files back.
//
// Build maps a model onto the llama.cpp architecture that computes exactly
// what it computes, or refuses it, saying why:
//
//	alibi       mpt, with the max_alibi_bias whose slopes are the model's (checked)
//	none        mpt, max_alibi_bias 0 (causal mask only)
//	rope        gptneox: the whole head rotated in the half-split layout, base 10000;
//	            under pi, linear rope scaling; under ntk, the base it multiplies
//	sinusoidal  gpt2, the table written as the position embedding of Options.Context rows
//
// t5, kerple, fire, fox, stick-breaking, pope, log-length scaling, and the extensions yarn (its
// ramp differs from llama.cpp's), dynamic-ntk and interp (slopes no max
// bias gives) are refused. The token embedding is written already scaled
// by sqrt(d_model), the untied output head as output.weight, every matrix
// as llama.cpp lays it out, (out, in). The tokenizer becomes llama.cpp's
// byte-level BPE vocabulary ("gpt2"): tokens in GPT-2's byte-level spelling,
// merges in rank order and the pre-tokenizer of the tokenizer's pattern
// ("gpt-2" or "llama-bpe"); the byte tokenizer is 256 byte tokens and no
// merges. Keys under KeyPrefix say what made the file: the scheme, the
// training length and config, the tokenizer's hash, the corpus's
// fingerprint, the checkpoint and its step, and whether its run finished.
//
// The matrices are F32 (the model exactly), F16 or Q8_0 (ggml's blocks of
// 32 int8 values and a float16 scale); Encode and Decode convert values.
// What llama.cpp then computes differs from this project's evaluation only
// in its arithmetic: its GELU is the tanh approximation read from a
// float16 table, where the model's is exact. The agreement is measured by
// the package's tests, which score exported models with llama.cpp itself
// (testdata/llama), and stated in the README.
package gguf

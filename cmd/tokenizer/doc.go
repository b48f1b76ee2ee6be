// Command tokenizer trains a byte-level BPE on a corpus into a Hugging Face
// tokenizer.json, encodes a text to token ids and decodes ids to bytes.
//
// Usage:
//
//	go run ./cmd/tokenizer --train CORPUS [--vocab N] [--val-frac F] [--pattern gpt2|llama3] [--out FILE] [--force]
//	go run ./cmd/tokenizer --encode FILE|- [--tokenizer T] [--out FILE] [--force]
//	go run ./cmd/tokenizer --decode FILE|- [--tokenizer T] [--out FILE] [--force]
//	go run ./cmd/tokenizer --info [--tokenizer T]
//
// Exactly one of --train, --encode, --decode and --info says what to do.
// --help prints the flags.
//
// The tokenizer (package data/bpe) is a byte-level BPE: its merges are over
// bytes, so every text encodes, valid UTF-8 or not, and decoding gives its
// bytes back exactly. It splits the text into pieces by GPT-2's pattern
// (words with their leading space, numbers, runs of punctuation, white
// space), or Llama 3's, and merges never cross two pieces. It reads and
// writes Hugging Face's tokenizer.json, and encodes as Hugging Face's
// libraries do (encode with add_special_tokens false).
//
// # Training
//
//	--train CORPUS
//		Train a BPE on this corpus, as cmd/train's data.corpus takes it: a
//		file, a directory (every file below it, in sorted order),
//		goroot:src (the Go standard library's source, about 90 MB) or
//		builtin:opticks (Newton's Opticks, 0.6 MB). Only its training
//		split is read: the first 1 - --val-frac of its bytes, exactly what
//		cmd/train trains on, so the validation text stays unseen.
//	--vocab N
//		The vocabulary size: the 256 bytes, then one token per merge.
//		Default 4096. Training stops early, and says so, when no adjacent
//		pair is left to merge.
//	--val-frac F
//		The corpus's validation fraction, in [0, 1): the last F of its
//		bytes are left out. Default 0.1, as cmd/train's data.val_frac.
//	--pattern P
//		The pre-tokenizer's pattern: gpt2 (the default; GPT-2's and
//		RoBERTa's) or llama3 (Llama 3's, also OpenAI's cl100k: letters
//		with one leading non-letter, numbers in threes, newlines kept with
//		the punctuation before them).
//
// Training counts the pieces of the text, then repeatedly merges the
// adjacent pair of tokens that occurs most often (counting overlapping
// occurrences); of pairs with equal counts, the one whose left token has
// the smallest id, then whose right token has. Ids 0-255 are the bytes,
// and the n-th new token has id 255 + n. The same corpus, --val-frac,
// --vocab and --pattern give the same file on every machine.
//
// On a terminal, stderr shows a bar for reading a directory corpus and for
// each stage of training; a line reports each stage as it ends, and the
// last one the file written, its tokens and its hash.
//
// # Encoding and decoding
//
//	--encode FILE
//		Encode this file's bytes, or standard input's for -. The ids are
//		written as decimal numbers, one space between two, and a newline
//		after the last; stderr gets the count of bytes and tokens.
//	--decode FILE
//		Decode the ids in this file, or on standard input for -: decimal
//		numbers separated by white space (what --encode writes). The bytes
//		are written as they are.
//	--info
//		Describe the tokenizer on standard output: its kind, tokens,
//		merges, pattern, added tokens and hash. The hash names what
//		decides the ids, not how the file spells it.
//	--tokenizer T
//		The tokenizer of --encode, --decode and --info: a tokenizer.json,
//		or bytes for the byte tokenizer (each byte its own id, as every
//		model of cmd/train reads). Default tokenizer.json. A tokenizer.json
//		of Hugging Face's byte-level BPE kind is used as it is: GPT-2's,
//		RoBERTa's or Llama 3's, with added tokens such as <|endoftext|>
//		matched in the text. Kinds it cannot honour exactly (Unigram,
//		WordPiece, a normalizer, byte_fallback, another pre-tokenizer
//		pattern, add_prefix_space, added tokens with lstrip, rstrip or
//		single_word) are refused, naming what is not supported.
//
// # Output
//
//	--out FILE
//		With --train, the tokenizer.json to write (default
//		tokenizer.json); with --encode and --decode, the file to write
//		instead of standard output. The file is written whole or not at
//		all.
//	--force
//		Replace an existing --out file; without it, an existing file is
//		refused before any work.
//
// Errors are one line on stderr, with exit status 1; a command line that
// does not parse, or flags that do not go together, exit 2.
//
// # Examples
//
// Train a BPE of 4096 tokens on Go's source, then look at it:
//
//	go run ./cmd/tokenizer --train goroot:src --vocab 4096 --out runs/go-4096.json
//	go run ./cmd/tokenizer --info --tokenizer runs/go-4096.json
//
// Encode a text, and decode its ids back to the same bytes:
//
//	go run ./cmd/tokenizer --tokenizer runs/go-4096.json --encode main.go --out main.ids
//	go run ./cmd/tokenizer --tokenizer runs/go-4096.json --decode main.ids
//
// The file loads in Hugging Face's libraries, which give the same ids:
// in Python, tokenizers.Tokenizer.from_file("runs/go-4096.json"), or
// transformers.PreTrainedTokenizerFast(tokenizer_file="runs/go-4096.json").
package main

// Package data turns text into tokens, splits corpora and produces training
// batches and evaluation windows.
//
// A [Tokenizer] turns text into token ids and back, exactly, on any input
// (valid UTF-8 or not). The [ByteTokenizer] maps every byte to its value
// ([VocabSize] ids, one token a byte); a byte-level BPE (package data/bpe)
// merges bytes into longer tokens, trained on a corpus or read from a
// Hugging Face tokenizer.json ([LoadTokenizer], [ParseTokenizerSpec]).
//
// Token streams are held as []uint32: one type for every tokenizer, 32
// bits because a vocabulary such as Llama 3's (128,256 ids) does not fit
// in 16. A byte-level stream takes four bytes a byte of text (goroot:src,
// about 90 MB, is about 360 MB of ids); a BPE stream takes about as much as
// its text, a token standing for three to four bytes. [Sampler] draws
// training windows from a stream, [NonOverlapWindows] and [SlidingWindows]
// lay out evaluation windows over it, and [CoveredBytes] counts the bytes
// its tokens stand for (the denominator of bits per byte).
//
// [Split] cuts a corpus's text into a training and a validation part at the
// same byte for every tokenizer. Passkey episodes are laid out in bytes by
// [Passkey] and in any tokenizer's tokens by [TokenPasskey], the same
// episodes for the byte tokenizer.
//
// The default corpus is Newton's Opticks, embedded in the package.
package data

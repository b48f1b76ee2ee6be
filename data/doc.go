// Package data turns text into tokens, splits corpora and produces training
// batches and evaluation windows.
//
// Tokens are bytes: the tokenizer maps every byte to its value, so the
// vocabulary has [VocabSize] entries and encoding is lossless on any input.
// The default corpus is Newton's Opticks, embedded in the package.
package data

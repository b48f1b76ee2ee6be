package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/alibi-go/alibi/model/osutil"
)

// encodeCommand writes the ids of --encode's text as decimal numbers, one
// space between them and a newline after the last.
func encodeCommand(o options, stdin io.Reader, stdout, stderr io.Writer) error {
	if o.out != "" {
		if err := checkOut(o.out, o.force); err != nil {
			return err
		}
	}
	tok, err := loadTokenizer(o)
	if err != nil {
		return err
	}
	text, err := readInput(o.encode, stdin)
	if err != nil {
		return err
	}
	start := time.Now()
	ids := tok.Encode(text)
	took := time.Since(start)
	buf := make([]byte, 0, 6*len(ids)+1)
	for i, id := range ids {
		if i > 0 {
			buf = append(buf, ' ')
		}
		buf = strconv.AppendUint(buf, uint64(id), 10)
	}
	buf = append(buf, '\n')
	if err := writeOutput(o.out, stdout, buf); err != nil {
		return err
	}
	perToken := 0.0
	if len(ids) > 0 {
		perToken = float64(len(text)) / float64(len(ids))
	}
	fmt.Fprintf(stderr, "tokenizer: %d bytes, %d tokens (%.2f bytes a token), encoded in %.3fs\n", len(text), len(ids), perToken, took.Seconds())
	return nil
}

// decodeCommand writes the bytes of the ids in --decode's input: decimal
// numbers separated by white space.
func decodeCommand(o options, stdin io.Reader, stdout io.Writer) error {
	if o.out != "" {
		if err := checkOut(o.out, o.force); err != nil {
			return err
		}
	}
	tok, err := loadTokenizer(o)
	if err != nil {
		return err
	}
	in, err := readInput(o.decode, stdin)
	if err != nil {
		return err
	}
	words := bytes.Fields(in)
	ids := make([]uint32, len(words))
	for i, w := range words {
		v, err := strconv.ParseUint(string(w), 10, 32)
		if err != nil {
			return fmt.Errorf("--decode %s: word %d, %q, is not a token id", o.decode, i+1, truncate(w))
		}
		ids[i] = uint32(v)
	}
	text, err := tok.Decode(ids)
	if err != nil {
		return fmt.Errorf("--decode %s: %w", o.decode, err)
	}
	return writeOutput(o.out, stdout, text)
}

// readInput reads a file, or standard input for "-".
func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		b, err := io.ReadAll(bufio.NewReader(stdin))
		if err != nil {
			return nil, fmt.Errorf("standard input: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// writeOutput writes b to the --out file, atomically, or to stdout.
func writeOutput(path string, stdout io.Writer, b []byte) error {
	if path == "" {
		_, err := stdout.Write(b)
		return err
	}
	if err := osutil.WriteFileAtomic(path, b); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	return nil
}

// truncate shortens a word for an error message.
func truncate(w []byte) string {
	if len(w) > 20 {
		return string(w[:20]) + "..."
	}
	return string(w)
}

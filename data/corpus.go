package data

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultCorpusName names the embedded default corpus. [LoadCorpus] accepts it
// (and the empty string) in place of a path.
const DefaultCorpusName = "builtin:opticks"

// opticksGz is Isaac Newton's "Opticks" (public domain), the Project Gutenberg
// text that ships with Go as $GOROOT/src/testdata/Isaac.Newton-Opticks.txt,
// compressed with gzip at best compression.
//
//go:embed corpus/opticks.txt.gz
var opticksGz []byte

// DefaultCorpus returns the decompressed bytes of the embedded default corpus,
// Newton's Opticks. Each call returns a fresh copy that the caller may modify.
func DefaultCorpus() ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(opticksGz))
	if err != nil {
		return nil, fmt.Errorf("default corpus %s: %w", DefaultCorpusName, err)
	}
	defer zr.Close()
	text, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("default corpus %s: decompress: %w", DefaultCorpusName, err)
	}
	return text, nil
}

// LoadCorpus returns the bytes of the corpus named by path.
//
// An empty path or [DefaultCorpusName] selects [DefaultCorpus]. A regular file
// yields its contents. A directory yields the concatenation of all regular
// files below it, recursively, ordered by their slash-separated path relative
// to the directory; files and directories whose name starts with "." are
// skipped, as are symbolic links and other non-regular files.
//
// It returns an error if path does not exist or cannot be read, and if the
// resulting corpus is empty.
func LoadCorpus(path string) ([]byte, error) {
	if path == "" || path == DefaultCorpusName {
		return DefaultCorpus()
	}
	info, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == path {
			err = pe.Err // the path is already in our message
		}
		return nil, fmt.Errorf("corpus %s: %w", path, err)
	}
	var text []byte
	switch {
	case info.Mode().IsRegular():
		text, err = os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("corpus %s: %w", path, err)
		}
	case info.IsDir():
		text, err = readTree(path)
		if err != nil {
			return nil, fmt.Errorf("corpus %s: %w", path, err)
		}
	default:
		return nil, fmt.Errorf("corpus %s: not a regular file or directory (mode %v)", path, info.Mode())
	}
	if len(text) == 0 {
		return nil, fmt.Errorf("corpus %s is empty", path)
	}
	return text, nil
}

// readTree concatenates the non-hidden regular files below root, ordered by
// their slash-separated path relative to root.
func readTree(root string) ([]byte, error) {
	type file struct{ key, path string }
	var files []file
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, file{key: filepath.ToSlash(rel), path: p})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk: %w", err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].key < files[j].key })
	var buf bytes.Buffer
	for _, f := range files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

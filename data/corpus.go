package data

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultCorpusName names the embedded default corpus. [LoadCorpus] accepts it
// (and the empty string) in place of a path.
const DefaultCorpusName = "builtin:opticks"

// GorootPrefix starts a corpus spec that names Go source shipped with the Go
// toolchain: "goroot:src" is every .go file below $(go env GOROOT)/src, and
// "goroot:src/net" a part of it.
const GorootPrefix = "goroot:"

// opticksGz is Isaac Newton's "Opticks" (public domain), the Project Gutenberg
// text that ships with Go as $GOROOT/src/testdata/Isaac.Newton-Opticks.txt,
// compressed with gzip at best compression.
//
//go:embed corpus/opticks.txt.gz
var opticksGz []byte

// Corpus is a loaded text corpus: its text, which a [Tokenizer] encodes
// into the token ids that training and evaluation windows read.
type Corpus struct {
	Spec      string // as given: builtin:opticks, goroot:src, a file or a directory
	Bytes     []byte // the text
	SHA256    string // hex SHA-256 of Bytes: names exactly what a run trained on
	Files     int    // number of files read (1 for a file or the built-in corpus)
	GoVersion string // Go release of a goroot: corpus (GOROOT/VERSION); "" otherwise
}

// Progress is told, after each file of a directory corpus, how many bytes
// have been read out of how many.
type Progress func(read, total int64)

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

// LoadCorpus loads the corpus named by spec:
//   - "" or [DefaultCorpusName]: [DefaultCorpus];
//   - "goroot:DIR": every .go file below $GOROOT/DIR (GOROOT from the
//     environment, else from `go env GOROOT`), e.g. "goroot:src", the Go
//     standard library's own source, about 90 MB;
//   - a regular file: its contents;
//   - a directory: all regular files below it.
//
// Directory corpora are the concatenation of their files in the order of
// their slash-separated paths relative to the directory, so the bytes (and a
// train/validation split) are the same on every machine with the same files.
// Files and directories whose name starts with "." are skipped, as are
// symbolic links and other non-regular files. The bytes are read into one
// buffer of the corpus's exact size. It is an error for the corpus to be
// empty.
func LoadCorpus(spec string) (*Corpus, error) { return LoadCorpusProgress(spec, nil) }

// LoadCorpusProgress is LoadCorpus that reports the progress of reading a
// directory to progress (which may be nil).
func LoadCorpusProgress(spec string, progress Progress) (*Corpus, error) {
	c := &Corpus{Spec: spec, Files: 1}
	var err error
	switch {
	case spec == "" || spec == DefaultCorpusName:
		c.Bytes, err = DefaultCorpus()
	case strings.HasPrefix(spec, GorootPrefix):
		err = c.loadGoroot(strings.TrimPrefix(spec, GorootPrefix), progress)
	default:
		err = c.loadPath(spec, progress)
	}
	if err != nil {
		return nil, err
	}
	if len(c.Bytes) == 0 {
		return nil, fmt.Errorf("corpus %s is empty", spec)
	}
	sum := sha256.Sum256(c.Bytes)
	c.SHA256 = hex.EncodeToString(sum[:])
	return c, nil
}

func (c *Corpus) loadPath(path string, progress Progress) error {
	info, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == path {
			err = pe.Err // the path is already in our message
		}
		return fmt.Errorf("corpus %s: %w", path, err)
	}
	switch {
	case info.Mode().IsRegular():
		if c.Bytes, err = os.ReadFile(path); err != nil {
			return fmt.Errorf("corpus %s: %w", path, err)
		}
	case info.IsDir():
		if err := c.readTree(path, func(string) bool { return true }, progress); err != nil {
			return fmt.Errorf("corpus %s: %w", path, err)
		}
	default:
		return fmt.Errorf("corpus %s: not a regular file or directory (mode %v)", path, info.Mode())
	}
	return nil
}

// loadGoroot reads the .go files below GOROOT/sub and records the Go release.
func (c *Corpus) loadGoroot(sub string, progress Progress) error {
	spec := GorootPrefix + sub
	root, err := goroot()
	if err != nil {
		return fmt.Errorf("corpus %s: %w; set GOROOT, or set data.corpus to a directory such as /usr/local/go/src", spec, err)
	}
	dir := filepath.Join(root, filepath.FromSlash(sub))
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("corpus %s: %s is not a directory of the Go installation at %s", spec, sub, root)
	}
	v, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return fmt.Errorf("corpus %s: the Go installation at %s has no VERSION file: %w", spec, root, err)
	}
	c.GoVersion, _, _ = strings.Cut(strings.TrimSpace(string(v)), "\n")
	if err := c.readTree(dir, func(name string) bool { return strings.HasSuffix(name, ".go") }, progress); err != nil {
		return fmt.Errorf("corpus %s: %w", spec, err)
	}
	return nil
}

// goroot finds the Go installation: $GOROOT, else `go env GOROOT`.
func goroot() (string, error) {
	if r := os.Getenv("GOROOT"); r != "" {
		return r, nil
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("cannot find the Go installation: GOROOT is unset and there is no go command on PATH")
	}
	out, err := exec.Command(gocmd, "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("cannot find the Go installation: go env GOROOT: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// readTree reads the non-hidden regular files below root whose names keep
// accepts, ordered by their slash-separated path relative to root, into one
// buffer of their total size.
func (c *Corpus) readTree(root string, keep func(name string) bool, progress Progress) error {
	type file struct {
		key, path string
		size      int64
	}
	var files []file
	var total int64
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
		if !d.Type().IsRegular() || !keep(d.Name()) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, file{key: filepath.ToSlash(rel), path: p, size: info.Size()})
		total += info.Size()
		return nil
	})
	if err != nil {
		return fmt.Errorf("walk: %w", err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].key < files[j].key })
	buf := make([]byte, total)
	var off int64
	for _, f := range files {
		if err := readExactly(f.path, buf[off:off+f.size]); err != nil {
			return err
		}
		off += f.size
		if progress != nil {
			progress(off, total)
		}
	}
	c.Bytes, c.Files = buf, len(files)
	return nil
}

// readExactly fills dst with the whole file at path, failing if the file is
// not exactly len(dst) bytes long (it changed since it was listed).
func readExactly(path string, dst []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.ReadFull(f, dst); err != nil {
		return fmt.Errorf("%s changed while it was read: %w", path, err)
	}
	if n, _ := f.Read(make([]byte, 1)); n != 0 {
		return fmt.Errorf("%s grew while it was read", path)
	}
	return nil
}

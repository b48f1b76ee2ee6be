package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/alibi-go/alibi/model/osutil"
)

// pageStore is a speed.json and its page, speed.md, read before the
// measurement so that a file that cannot be updated stops the command
// before it measures.
type pageStore struct {
	jsonPath, pagePath string
	rows               []Row
	page               string
}

// openPageStore reads the speed.json at jsonPath (none yet: no rows) and
// the .md page beside it (none yet: a page holding only the table).
func openPageStore(jsonPath string) (*pageStore, error) {
	s := &pageStore{jsonPath: jsonPath, pagePath: strings.TrimSuffix(jsonPath, ".json") + ".md"}
	var err error
	if s.rows, err = readRows(jsonPath); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(s.pagePath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.page = "# Speed\n\n" + tableStart + "\n" + tableEnd + "\n"
	case err != nil:
		return nil, err
	default:
		s.page = string(b)
	}
	if _, err := replaceTable(s.page, s.rows); err != nil {
		return nil, fmt.Errorf("%s: %w", s.pagePath, err)
	}
	return s, nil
}

// write stores row in place of the row of the same processor, rewrites
// the page's table and returns the number of rows. Each file is replaced
// whole (osutil.WriteFileAtomic).
func (s *pageStore) write(row Row) (int, error) {
	rows := mergeRow(s.rows, row)
	b, err := encodeRows(rows)
	if err != nil {
		return 0, err
	}
	page, err := replaceTable(s.page, rows)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.pagePath, err)
	}
	if err := osutil.WriteFileAtomic(s.jsonPath, b); err != nil {
		return 0, err
	}
	if err := osutil.WriteFileAtomic(s.pagePath, []byte(page)); err != nil {
		return 0, err
	}
	return len(rows), nil
}

package main

import (
	"testing"

	"github.com/alibi-go/alibi/cmd/internal/clitest"
)

// doc.go documents every flag that --help lists and no other, and every
// "go run ./cmd/export" command of README.md and the commands' doc.go files
// names only flags of this command, with values that parse.
func TestDocs(t *testing.T) { clitest.CheckDocs(t, "export", command) }

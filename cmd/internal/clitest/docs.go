package clitest

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Command is a command's entry point as its tests call it: the arguments
// after the program's name, stdout and stderr; it returns the exit code.
type Command func(args []string, stdout, stderr io.Writer) int

// Flag is one flag of a command, as its usage (--help) lists it.
type Flag struct {
	Name string
	// Type is the value's type as the usage shows it: "string", "int",
	// "uint", "float", "duration" or "value" (a flag.Value of the command's
	// own; any other word is taken as a string); "" for a boolean flag,
	// which takes no value.
	Type string
}

// CheckDocs is the documentation test of command name, one call in the
// command's doc_test.go:
//
//	func TestDocs(t *testing.T) { clitest.CheckDocs(t, "eval", command) }
//
// It reads the flags that `--help` lists and checks, as subtests, that the
// package's doc.go documents exactly those flags (CheckFlagReference), and
// that every `go run ./cmd/<name>` command in README.md and in every
// cmd/*/doc.go names only those flags and, when it is a real command and
// not a usage line, parses with them (CheckDocumentedCommands).
func CheckDocs(t *testing.T, name string, command Command) {
	t.Helper()
	flags := HelpFlags(t, command)
	t.Run("flag reference", func(t *testing.T) { CheckFlagReference(t, "doc.go", name, flags) })
	t.Run("documented commands", func(t *testing.T) { CheckDocumentedCommands(t, name, flags) })
}

// HelpFlags runs command with --help, which must exit 0, and returns the
// flags its usage lists (ParseHelp), in the usage's order.
func HelpFlags(t testing.TB, command Command) []Flag {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := command([]string{"--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--help exits %d, want 0:\n%s", code, stderr.String())
	}
	flags := ParseHelp(stdout.String() + stderr.String())
	if len(flags) == 0 {
		t.Fatalf("--help lists no flags:\n%s", stderr.String())
	}
	return flags
}

// helpFlagLine is a flag's first line in flag.PrintDefaults: two spaces,
// -name, the value's type if it takes one, and (for a one-letter boolean
// flag) a tab before its usage on the same line.
var helpFlagLine = regexp.MustCompile(`^  -([^\s=]+)(?: (\S+))?(?:\t.*)?$`)

// ParseHelp reads the flags a usage text lists in the layout of
// flag.PrintDefaults.
func ParseHelp(usage string) []Flag {
	var flags []Flag
	for line := range strings.SplitSeq(usage, "\n") {
		if m := helpFlagLine.FindStringSubmatch(line); m != nil {
			flags = append(flags, Flag{Name: m[1], Type: m[2]})
		}
	}
	return flags
}

// flagEntry is the first line of a flag's entry in a command's doc.go: a
// code line of the package comment (indented by one tab) that starts with
// the flag, as --name or --name VALUE.
var flagEntry = regexp.MustCompile(`^//\t--?([A-Za-z][A-Za-z0-9_-]*)(?:[ =].*)?$`)

// CheckFlagReference checks that the doc.go at path (relative to the test's
// directory, the command's package) starts its package comment with
// "Command <name> " and lists exactly flags: each flag once, as an entry
// whose first line is a code line of the comment starting with the flag,
//
//	--len N
//		Also evaluate at length N.
//
// so that a flag added to the command without documentation, or one
// documented that the command does not have, fails.
func CheckFlagReference(t testing.TB, path, name string, flags []Flag) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the command's reference: %v", err)
	}
	text := string(b)
	if !strings.HasPrefix(text, "// Command "+name+" ") {
		t.Errorf("%s does not start with the package comment %q", path, "// Command "+name+" ...")
	}
	documented := map[string]int{}
	for line := range strings.SplitSeq(text, "\n") {
		if m := flagEntry.FindStringSubmatch(line); m != nil {
			documented[m[1]]++
		}
	}
	for _, f := range flags {
		switch documented[f.Name] {
		case 0:
			t.Errorf("%s does not document --%s, which --help lists (an entry: a line \"//\\t--%s\")", path, f.Name, f.Name)
		case 1:
		default:
			t.Errorf("%s documents --%s %d times", path, f.Name, documented[f.Name])
		}
	}
	for _, n := range sortedKeys(documented) {
		if !slices.ContainsFunc(flags, func(f Flag) bool { return f.Name == n }) {
			t.Errorf("%s documents --%s, which --help does not list", path, n)
		}
	}
}

// DocFiles are the files whose commands CheckDocumentedCommands reads:
// README.md at the module's root and every cmd/*/doc.go.
func DocFiles(root string) ([]string, error) {
	docs, err := filepath.Glob(filepath.Join(root, "cmd", "*", "doc.go"))
	if err != nil {
		return nil, err
	}
	return append([]string{filepath.Join(root, "README.md")}, docs...), nil
}

// CheckDocumentedCommands checks every `go run ./cmd/<name>` command that
// DocCommands finds in README.md and in every cmd/*/doc.go against flags,
// the command's flags (CheckArgs). The command's own doc.go must hold at
// least one.
func CheckDocumentedCommands(t testing.TB, name string, flags []Flag) {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := DocFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	own := 0
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		for _, c := range DocCommands(rel, string(b)) {
			if c.Name != name {
				continue
			}
			if rel == filepath.Join("cmd", name, "doc.go") {
				own++
			}
			if err := CheckArgs(flags, c); err != nil {
				t.Errorf("%s:%d: %s: %v", c.File, c.Line, c, err)
			}
		}
	}
	if own == 0 {
		t.Errorf("cmd/%s/doc.go shows no example: an indented line \"go run ./cmd/%s ...\"", name, name)
	}
}

// ModuleRoot is the directory of the go.mod above the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// DocCommand is one `go run ./cmd/<name> ...` command written in the
// documentation.
type DocCommand struct {
	File string // where it is written
	Line int    // the line it starts on, from 1
	Name string // the command: "eval" for go run ./cmd/eval
	// Args are its arguments, split as a shell splits them (quotes
	// removed), up to a comment or a shell operator.
	Args []string
	// Usage marks a usage line rather than a command to run: its text has
	// brackets or an ellipsis ([--len N], FILE...), so only the flags it
	// names are checked.
	Usage bool
}

func (c DocCommand) String() string {
	return strings.TrimSpace("go run ./cmd/" + c.Name + " " + strings.Join(c.Args, " "))
}

// DocCommands finds the `go run ./cmd/<name>` commands of a file's text.
// In a Go file (path ending in .go) it reads the code lines of comments,
// those indented by a tab (or by two spaces or more); in Markdown, the
// lines of fenced code blocks and the inline code spans (`...`, which may
// run over line breaks within a paragraph). In code lines, a backslash at
// the end of a line continues the command on the next one, and the
// command ends at a comment (#) or a shell operator (; & | < > ` ( ));
// a usage line (see DocCommand.Usage) ends only at a comment or at the end
// of its code span or line.
func DocCommands(path, text string) []DocCommand {
	var found []DocCommand
	add := func(line int, s string) {
		for _, c := range commandsIn(s) {
			c.File, c.Line = path, line
			found = append(found, c)
		}
	}
	lines := strings.Split(text, "\n")
	if strings.HasSuffix(path, ".go") {
		var code []string
		for i, l := range lines {
			if c, ok := strings.CutPrefix(l, "//"); ok && (strings.HasPrefix(c, "\t") || strings.HasPrefix(c, "  ")) {
				code = append(code, c)
				continue
			}
			codeLines(i+1-len(code), code, add)
			code = nil
		}
		codeLines(len(lines)+1-len(code), code, add)
		return found
	}
	var fence string // the opening fence while in a fenced block
	var code, para []string
	first := 0 // the first line of code or para
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		marker := fenceMarker(trimmed)
		switch {
		case fence == "" && marker != "" && len(l)-len(trimmed) < 4:
			spans(first, para, add)
			para, fence, first = nil, marker, i+2
		case fence != "" && marker != "" && strings.HasPrefix(marker, fence[:1]) && len(marker) >= len(fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "":
			codeLines(first, code, add)
			code, fence = nil, ""
		case fence != "":
			code = append(code, l)
		case strings.TrimSpace(l) == "":
			spans(first, para, add)
			para = nil
		default:
			if para == nil {
				first = i + 1
			}
			para = append(para, l)
		}
	}
	if fence != "" {
		codeLines(first, code, add)
	}
	spans(first, para, add)
	return found
}

// fenceMarker is the run of three or more backticks or tildes that a
// Markdown code fence starts with, or "".
func fenceMarker(s string) string {
	for _, ch := range []string{"`", "~"} {
		n := len(s) - len(strings.TrimLeft(s, ch))
		if n >= 3 {
			return s[:n]
		}
	}
	return ""
}

// codeLines hands add each logical line of a block of code lines (the
// first is line first of the file): lines ending in a backslash are joined
// to the next.
func codeLines(first int, code []string, add func(int, string)) {
	for i := 0; i < len(code); i++ {
		start, joined := i, code[i]
		for strings.HasSuffix(strings.TrimRight(joined, " \t"), `\`) && i+1 < len(code) {
			i++
			joined = strings.TrimSuffix(strings.TrimRight(joined, " \t"), `\`) + " " + code[i]
		}
		add(first+start, joined)
	}
}

// spans hands add the inline code spans of a Markdown paragraph (whose
// first line is line first of the file), each with the line it starts on.
func spans(first int, para []string, add func(int, string)) {
	text := strings.Join(para, "\n")
	for i := 0; i < len(text); {
		if text[i] != '`' {
			i++
			continue
		}
		n := len(text[i:]) - len(strings.TrimLeft(text[i:], "`"))
		open := text[:i+n]
		end := closingRun(text, i+n, n)
		if end < 0 {
			i += n
			continue
		}
		add(first+strings.Count(open, "\n"), strings.ReplaceAll(text[i+n:end], "\n", " "))
		i = end + n
	}
}

// closingRun is the index of the next run of exactly n backticks in text
// from index from, or -1.
func closingRun(text string, from, n int) int {
	for i := from; i < len(text); {
		if text[i] != '`' {
			i++
			continue
		}
		m := len(text[i:]) - len(strings.TrimLeft(text[i:], "`"))
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

// goRun is where a documented command starts.
var goRun = regexp.MustCompile(`\bgo run \./cmd/([A-Za-z0-9_-]+)(/|\b)`)

// commandsIn finds the commands in one logical line of code or one code
// span.
func commandsIn(s string) []DocCommand {
	var out []DocCommand
	for _, m := range goRun.FindAllStringSubmatchIndex(s, -1) {
		rest := s[m[1]:]
		if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			continue
		}
		c := DocCommand{Name: s[m[2]:m[3]]}
		var marked bool
		c.Args, marked = splitShell(rest, true)
		c.Usage = marked || slices.ContainsFunc(c.Args, func(a string) bool {
			return strings.Contains(a, "...") || strings.Contains(a, "…")
		})
		if !c.Usage {
			c.Args, _ = splitShell(rest, false)
		}
		out = append(out, c)
	}
	return out
}

// splitShell splits s into words as a POSIX shell does (blanks separate;
// single quotes, double quotes and backslashes quote), up to a comment, a
// word starting with #. Outside a usage line it also stops at a shell
// operator. It reports whether s had an unquoted bracket.
func splitShell(s string, usage bool) (words []string, bracket bool) {
	var cur strings.Builder
	in := false // a word is under way
	end := func() {
		if in {
			words = append(words, cur.String())
		}
		cur.Reset()
		in = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			end()
		case c == '#' && !in:
			end()
			return words, bracket
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : min(len(s), i+1+j)])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case !usage && strings.IndexByte(";&|<>()`", c) >= 0:
			end()
			return words, bracket
		default:
			if c == '[' || c == ']' {
				bracket = true
			}
			cur.WriteByte(c)
			in = true
		}
	}
	end()
	return words, bracket
}

// flagWord is a word that names a flag: -name or --name, maybe with
// =value.
var flagWord = regexp.MustCompile(`^--?([A-Za-z][A-Za-z0-9_-]*)(=.*)?$`)

// CheckArgs reports why c's arguments do not fit the command's flags, or
// nil. A usage line's words that name a flag (once brackets, braces,
// parentheses, bars and commas around them are removed) must be flags of
// the command. A real command must parse: each flag known, a value after
// every flag that takes one, values of the flag's type (int, uint, float,
// duration, bool), and no other argument. A value in capitals, such as N,
// FILE, K/N or FILE.png, is a placeholder and fits any type; a word with a
// shell expansion ($) is taken as it stands: as a value where one is
// due, and otherwise skipped.
func CheckArgs(flags []Flag, c DocCommand) error {
	byName := map[string]Flag{}
	for _, f := range flags {
		byName[f.Name] = f
	}
	if c.Usage {
		var unknown []string
		for _, a := range c.Args {
			m := flagWord.FindStringSubmatch(strings.Trim(a, "[](){}|,"))
			if m == nil || m[1] == "h" || m[1] == "help" {
				continue
			}
			if _, ok := byName[m[1]]; !ok {
				unknown = append(unknown, "--"+m[1])
			}
		}
		switch len(unknown) {
		case 0:
		case 1:
			return fmt.Errorf("%s is not a flag of cmd/%s", unknown[0], c.Name)
		default:
			return fmt.Errorf("%s are not flags of cmd/%s", strings.Join(unknown, ", "), c.Name)
		}
		return nil
	}
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	var msg bytes.Buffer
	fs.SetOutput(&msg)
	for _, f := range flags {
		fs.Var(&checkedValue{typ: f.Type}, f.Name, "")
	}
	var args []string
	for i, a := range c.Args {
		// A word with a shell expansion where a flag is due stands for
		// words that cannot be known here.
		if strings.HasPrefix(a, "$") && (i == 0 || !takesValue(byName, c.Args[i-1])) {
			continue
		}
		args = append(args, a)
	}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return nil // --help, which every command takes
	}
	if err != nil {
		return fmt.Errorf("cmd/%s would refuse it: %v", c.Name, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("cmd/%s would refuse it: unexpected argument %q", c.Name, fs.Arg(0))
	}
	return nil
}

// takesValue reports whether word is a flag, without =value, that takes
// the next word as its value.
func takesValue(byName map[string]Flag, word string) bool {
	m := flagWord.FindStringSubmatch(word)
	if m == nil || m[2] != "" {
		return false
	}
	f, ok := byName[m[1]]
	return ok && f.Type != ""
}

// placeholder is a value written in capitals: N, FILE, FILE.png, K/N.
var placeholder = regexp.MustCompile(`^[A-Z][A-Z0-9_]*([./:,-][A-Za-z0-9_]+)*$`)

// checkedValue is a flag of a documented command: it accepts the values
// its type parses, placeholders and shell expansions.
type checkedValue struct{ typ string }

func (v *checkedValue) String() string   { return "" }
func (v *checkedValue) IsBoolFlag() bool { return v.typ == "" }

func (v *checkedValue) Set(s string) error {
	if placeholder.MatchString(s) || strings.Contains(s, "$") {
		return nil
	}
	var err error
	switch v.typ {
	case "":
		_, err = strconv.ParseBool(s)
	case "int":
		_, err = strconv.ParseInt(s, 0, 64)
	case "uint":
		_, err = strconv.ParseUint(s, 0, 64)
	case "float":
		_, err = strconv.ParseFloat(s, 64)
	case "duration":
		_, err = time.ParseDuration(s)
	}
	if err != nil {
		return fmt.Errorf("not a %s", cmp.Or(v.typ, "bool"))
	}
	return nil
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package train

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// yamlErrorRE splits a yaml.v3 syntax error into its line, if any, and its
// problem.
var yamlErrorRE = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// yamlSyntaxError rewrites err, the error yaml.v3 gave for the document b,
// as one line naming the line where the problem is.
//
// yaml.v3 numbers an error by the start of the token being scanned when the
// problem was found, not by the problem itself: a tab that breaks the
// indentation is reported on the line of the value before it, one line
// early (or more, across blank lines), and a problem on the first line gets
// no line at all. The line reported here is the first one at which the
// document, cut after that line, already fails with the same problem: the
// line of the offending character, since the scanner reads forward and
// fails as soon as it meets it. It is never before the line yaml.v3 names,
// which is where the search starts; if no cut reproduces the problem (it is
// at the very end), yaml.v3's own line stays.
func yamlSyntaxError(b []byte, err error) error {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	m := yamlErrorRE.FindStringSubmatch(msg)
	if m == nil {
		return errors.New(msg)
	}
	from, _ := strconv.Atoi(m[1])
	end := 0
	for line := 1; end < len(b); line++ {
		if i := bytes.IndexByte(b[end:], '\n'); i >= 0 {
			end += i + 1
		} else {
			end = len(b)
		}
		if line < from {
			continue
		}
		var doc yaml.Node
		cutErr := yaml.Unmarshal(b[:end], &doc)
		if cutErr == nil {
			continue
		}
		if c := yamlErrorRE.FindStringSubmatch(strings.Join(strings.Fields(cutErr.Error()), " ")); c != nil && c[2] == m[2] {
			return errors.New("yaml: line " + strconv.Itoa(line) + ": " + m[2])
		}
	}
	return errors.New(msg)
}

// YAMLSyntaxError rewrites err, the error yaml.v3 gave for the document b,
// as one line naming the line of the problem, as config errors do: for other
// YAML files of the project (cmd/experiment's --grid).
func YAMLSyntaxError(b []byte, err error) error { return yamlSyntaxError(b, err) }

package position

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// The package documentation names the file of every built-in scheme, and
// each scheme is in the file named after it: a scheme added to the
// registry's list without its file in the documentation fails.
func TestDocNamesEverySchemeFile(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	pkg := reflect.TypeFor[NoPosition]().PkgPath()
	builtin := 0
	for _, name := range Names() {
		s, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if reflect.TypeOf(s).PkgPath() != pkg {
			continue // registered by another package
		}
		builtin++
		file := name + ".go"
		if _, err := os.Stat(file); err != nil {
			t.Errorf("the scheme %q is not in %s: %v", name, file, err)
		}
		if !strings.Contains(string(doc), " "+file) {
			t.Errorf("doc.go does not name %s, the file of the scheme %q", file, name)
		}
	}
	if builtin < 8 {
		t.Errorf("%d built-in schemes, want at least the eight of alibi, sinusoidal, none, rope, t5, kerple, fire and fox", builtin)
	}
}

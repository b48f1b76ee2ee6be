package train

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A config with a tab (or another syntax error) names the line the error is
// on. yaml.v3 on its own names the line before a tab that breaks the
// indentation, and no line for an error on the first line.
func TestConfigSyntaxErrorLine(t *testing.T) {
	// lines numbers a config: line i+1 is lines[i].
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	tests := []struct {
		name, yaml, want string
	}{
		{"tab on the first line", lines("\tname: x", "model:", "  d_model: 8"),
			"yaml: line 1: found character that cannot start any token"},
		{"tab on line 7", lines("name: x", "model:", "  vocab: 256", "  d_model: 16", "  n_layers: 1", "  n_heads: 2", "\td_ff: 32", "  train_len: 8", "train:", "  batch: 4"),
			"yaml: line 7: found a tab character that violates indentation"},
		{"tab on line 3, first key of a section", lines("name: x", "model:", "\tvocab: 3", "  d_model: 8"),
			"yaml: line 3: found character that cannot start any token"},
		{"tab on the last line", lines("name: x", "train:", "  batch: 4", "  steps: 9", "\tlr: 1"),
			"yaml: line 5: found a tab character that violates indentation"},
		{"tab on the last line, no final newline", strings.TrimSuffix(lines("name: x", "train:", "  batch: 4", "  steps: 9", "\tlr: 1"), "\n"),
			"yaml: line 5: found a tab character that violates indentation"},
		{"tab after blank lines", lines("name: x", "model:", "  vocab: 256", "", "", "\td_ff: 32"),
			"yaml: line 6: found a tab character that violates indentation"},
		{"tab alone on a line", lines("name: x", "model:", "  d_ff: 32", "\t", "train:"),
			"yaml: line 4: found a tab character that violates indentation"},
		{"tab in a block scalar's indentation", lines("name: x", "out: |", "  a", "\tb"),
			"yaml: line 4: found a tab character where an indentation space is expected"},
		{"sequence entry in a mapping", lines("name: x", "- b"),
			"yaml: line 2: did not find expected key"},
		{"unknown alias on the first line", lines("name: *x"),
			"yaml: line 1: unknown anchor 'x' referenced"},
		{"unterminated quote: yaml.v3's own line", lines(`name: "x`),
			"yaml: line 2: found unexpected end of stream"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("ParseConfig error %v, want %q", err, tc.want)
			}
		})
	}
	// LoadConfig names the file and keeps the line.
	path := filepath.Join(t.TempDir(), "tab.yaml")
	if err := os.WriteFile(path, []byte(tests[1].yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(path)
	if want := "config " + path + ": " + tests[1].want; err == nil || err.Error() != want {
		t.Fatalf("LoadConfig error %v, want %q", err, want)
	}
}

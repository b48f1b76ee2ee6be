package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/alibi-go/alibi/layers/position"
	"github.com/alibi-go/alibi/model/osutil"
	"github.com/alibi-go/alibi/model/safetensors"
)

// Checkpoint is everything needed to use or resume a model: its config,
// weights and position buffers, plus any training state as extra tensors
// (optimizer moments) and metadata strings (step, RNG and data positions).
//
// On disk it is one safetensors file: weights under their names, the
// position scheme's buffer (position.Scheme Buffer) under
// "buffers.<its name>" (the ALiBi slopes as "buffers.alibi_slopes"), extra
// tensors under their own names, and
// in the metadata the config as JSON ("config"), a format tag ("format") and
// a SHA-256 over every tensor and metadata entry ("sha256").
type Checkpoint struct {
	Config         Config
	Weights        *Weights
	PositionBuffer []float32 // the position scheme's buffer (see Model.PositionBuffer)
	Extra          []safetensors.Tensor
	Meta           map[string]string
}

const (
	checkpointFormat = "alibi-go/checkpoint/v1"
	bufferPrefix     = "buffers."
	metaConfig       = "config"
	metaFormat       = "format"
	metaChecksum     = "sha256"
)

// NewCheckpoint returns a checkpoint of m with no training state.
func NewCheckpoint(m *Model) *Checkpoint {
	c := &Checkpoint{Config: m.Config, Weights: m.Weights, PositionBuffer: m.PositionBuffer, Meta: map[string]string{}}
	if m.dropped {
		c.Meta[MetaPositionsDropped] = "true"
	}
	return c
}

// MetaPositionsDropped is the metadata key that says, with "true", that
// DroPE had dropped the model's rotation (Config.DropeStep) when the
// checkpoint was written.
const MetaPositionsDropped = "model.positions_dropped"

// Model returns a model built from the checkpoint's config and weights
// (with the rotation dropped if the checkpoint says so).
func (c *Checkpoint) Model() (*Model, error) {
	m, err := FromWeights(c.Config, c.Weights)
	if err == nil && c.Meta[MetaPositionsDropped] == "true" {
		m.DropPositions()
	}
	return m, err
}

// Encode writes the checkpoint in safetensors form.
func (c *Checkpoint) Encode(w io.Writer) error {
	cfg, err := json.Marshal(c.Config)
	if err != nil {
		return err
	}
	var ts []safetensors.Tensor
	for _, name := range c.Weights.Names {
		t := c.Weights.Tensors[name]
		ts = append(ts, safetensors.F32(name, t.Shape(), t.Data().([]float32)))
	}
	if c.PositionBuffer != nil {
		s, err := c.Config.Scheme()
		if err != nil {
			return fmt.Errorf("encode checkpoint: %w", err)
		}
		name, _ := s.Buffer(c.Config.shape())
		ts = append(ts, safetensors.F32(bufferPrefix+name, []int{len(c.PositionBuffer)}, c.PositionBuffer))
	}
	ts = append(ts, c.Extra...)
	meta := map[string]string{metaConfig: string(cfg), metaFormat: checkpointFormat}
	for k, v := range c.Meta {
		if _, reserved := meta[k]; reserved || k == metaChecksum {
			return fmt.Errorf("checkpoint metadata key %q is reserved", k)
		}
		meta[k] = v
	}
	meta[metaChecksum] = checksum(ts, meta)
	return safetensors.Write(w, ts, meta)
}

// checksum hashes every tensor (name, dtype, shape, bytes) and every
// metadata entry but the checksum itself, in a fixed order.
func checksum(ts []safetensors.Tensor, meta map[string]string) string {
	h := sha256.New()
	for _, t := range ts {
		fmt.Fprintf(h, "%s|%s|%v|%d|", t.Name, t.DType, t.Shape, len(t.Data))
		h.Write(t.Data)
	}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		if k != metaChecksum {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%d|%s|%d|%s|", len(k), k, len(meta[k]), meta[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// notSafetensors names what a file that safetensors refused is, when its
// first bytes say it is something else: JSON (a tokenizer.json, a report),
// a GGUF model, a PNG, gzip, or text. It is "" otherwise, such as for a
// damaged checkpoint.
func notSafetensors(b []byte) string {
	head := b[:min(len(b), 64)]
	switch t := bytes.TrimLeft(head, " \t\r\n"); {
	case len(t) > 0 && (t[0] == '{' || t[0] == '['):
		return "JSON (a tokenizer.json or a report?)"
	case bytes.HasPrefix(head, []byte("GGUF")):
		return "a GGUF model (cmd/export writes them from checkpoints)"
	case bytes.HasPrefix(head, []byte("\x89PNG")):
		return "a PNG image"
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "gzip-compressed"
	}
	if len(head) >= 8 && utf8.Valid(head) && bytes.IndexFunc(head, func(r rune) bool { return r < ' ' && r != '\n' && r != '\t' && r != '\r' }) < 0 {
		return "text"
	}
	return ""
}

// UnknownSchemeError is the error of decoding a checkpoint whose position
// scheme is not registered in this program: a scheme another program added
// with position.Register, which a program must register too before it loads
// the checkpoint. It wraps position.ErrUnknownScheme.
type UnknownSchemeError struct {
	Scheme string // the checkpoint config's pos
}

func (e *UnknownSchemeError) Error() string {
	return fmt.Sprintf("position scheme %q is not registered in this program (position.Register)", e.Scheme)
}

// Unwrap returns position.ErrUnknownScheme.
func (e *UnknownSchemeError) Unwrap() error { return position.ErrUnknownScheme }

// DecodeCheckpoint parses and verifies a checkpoint file's bytes. A
// checkpoint of a position scheme this program has not registered gives an
// *UnknownSchemeError.
func DecodeCheckpoint(b []byte) (*Checkpoint, error) {
	ts, meta, err := safetensors.Read(b)
	if err != nil {
		if kind := notSafetensors(b); kind != "" {
			return nil, fmt.Errorf("not a checkpoint: the file is %s, not a safetensors checkpoint", kind)
		}
		return nil, err
	}
	if meta[metaFormat] != checkpointFormat {
		return nil, fmt.Errorf("not a checkpoint of this project (format %q)", meta[metaFormat])
	}
	if sum := checksum(ts, meta); sum != meta[metaChecksum] {
		return nil, fmt.Errorf("checksum mismatch: the file is corrupted")
	}
	c := &Checkpoint{Meta: map[string]string{}}
	dec := json.NewDecoder(strings.NewReader(meta[metaConfig]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c.Config); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if _, err := position.Lookup(c.Config.Pos); err != nil && c.Config.Pos != "" {
		return nil, &UnknownSchemeError{Scheme: c.Config.Pos}
	}
	if err := c.Config.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	for k, v := range meta {
		if k != metaConfig && k != metaFormat && k != metaChecksum {
			c.Meta[k] = v
		}
	}
	byName := make(map[string]safetensors.Tensor, len(ts))
	for _, t := range ts {
		byName[t.Name] = t
	}
	c.Weights = newWeights()
	for _, spec := range shapes(c.Config) {
		name := spec.name
		t, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("weight %s is missing", name)
		}
		v, err := t.Float32s()
		if err != nil {
			return nil, fmt.Errorf("weight %s: %w", name, err)
		}
		if !sameShape(t.Shape, spec.shape) {
			return nil, fmt.Errorf("weight %s has shape %v, want %v for this config", name, t.Shape, spec.shape)
		}
		copy(c.Weights.add(spec), v)
		delete(byName, name)
	}
	if c.PositionBuffer, err = readBuffer(c.Config, ts, byName); err != nil {
		return nil, err
	}
	for _, t := range ts { // the rest, in file order
		if _, ok := byName[t.Name]; ok {
			t.Data = append([]byte(nil), t.Data...)
			c.Extra = append(c.Extra, t)
		}
	}
	return c, nil
}

// readBuffer returns the position buffer of the checkpoint's tensors ts and
// removes it from byName. It must be the one the config's scheme has, of
// the length the scheme gives it, or absent when the scheme has none.
func readBuffer(cfg Config, ts []safetensors.Tensor, byName map[string]safetensors.Tensor) ([]float32, error) {
	name, want := cfg.mustScheme().Buffer(cfg.shape())
	var got []float32
	for _, t := range ts {
		if !strings.HasPrefix(t.Name, bufferPrefix) {
			continue
		}
		if want == nil || t.Name != bufferPrefix+name {
			return nil, fmt.Errorf("position buffer %s does not match pos %q", t.Name, cfg.Pos)
		}
		v, err := t.Float32s()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		got = append([]float32(nil), v...)
		delete(byName, t.Name)
	}
	if (want != nil) != (got != nil) || len(got) != len(want) {
		return nil, fmt.Errorf("position buffer %s does not match pos %q with %d heads: %d values, want %d",
			bufferPrefix+name, cfg.Pos, cfg.NHeads, len(got), len(want))
	}
	return got, nil
}

func sameShape(a []int, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ExtraTensor returns the extra tensor of that name.
func (c *Checkpoint) ExtraTensor(name string) (safetensors.Tensor, bool) {
	for _, t := range c.Extra {
		if t.Name == name {
			return t, true
		}
	}
	return safetensors.Tensor{}, false
}

// SaveCheckpoint writes c to path atomically: to a temporary file in the same
// directory, synced, renamed into place, and the directory synced. A crash
// at any moment leaves either the old file or the new one, never a mix.
func SaveCheckpoint(path string, c *Checkpoint) error {
	var buf bytes.Buffer
	if err := c.Encode(&buf); err != nil {
		return fmt.Errorf("save checkpoint %s: %w", path, err)
	}
	if err := osutil.WriteFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("save checkpoint %s: %w", path, err)
	}
	return nil
}

// LoadCheckpoint reads and verifies the checkpoint at path.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint: %w", err)
	}
	c, err := DecodeCheckpoint(b)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %s: %w", path, err)
	}
	return c, nil
}

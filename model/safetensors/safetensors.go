// Package safetensors is a small, strict implementation of the safetensors
// file format (https://github.com/huggingface/safetensors), the format of
// this project's checkpoints:
//
//	8 bytes   N, little-endian uint64: length of the header
//	N bytes   UTF-8 JSON object: tensor name -> {"dtype", "shape", "data_offsets"},
//	          plus an optional "__metadata__" object of string -> string
//	rest      byte buffer; data_offsets are [begin, end) relative to its start
//
// The writer is deterministic (byte-identical output for identical input) and
// the reader rejects anything the reference implementation would reject, plus
// duplicate JSON keys, unknown fields and trailing data after the header object.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// maxHeader is the largest header length accepted by
// Read and produced by Write. It matches the limit of
// the reference implementation (100 MB).
const maxHeader = 100_000_000

// metadataKey is the reserved header key holding the free-form metadata.
const metadataKey = "__metadata__"

// dtypeSizes maps every supported dtype name to its element size in bytes.
var dtypeSizes = map[string]uint64{
	"U8":  1,
	"I32": 4,
	"U32": 4,
	"F32": 4,
	"I64": 8,
	"U64": 8,
	"F64": 8,
}

// Tensor is one named tensor of a safetensors file, as raw little-endian bytes.
type Tensor struct {
	Name  string
	DType string // "F32", "F64", "I64", "I32", "U8", "U32", "U64"
	Shape []int
	Data  []byte
}

// byteSize returns product(shape)*size(dtype), failing on an unknown
// dtype, a negative dimension or an overflow of the product.
func byteSize(dtype string, shape []int) (uint64, error) {
	size, ok := dtypeSizes[dtype]
	if !ok {
		return 0, fmt.Errorf("unknown dtype %q", dtype)
	}
	n := size
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("negative dimension %d at shape index %d", d, i)
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 {
			return 0, fmt.Errorf("shape %v times dtype size %d overflows", shape, size)
		}
		n = lo
	}
	return n, nil
}

// Write writes tensors (in the given order; names must be unique and non-empty, len(Data) must equal product(shape)*dtype size) and metadata to w.
//
// The output is deterministic: tensors appear in the header and in the byte
// buffer in the given order with contiguous data offsets, metadata keys are
// emitted sorted (the "__metadata__" entry comes first and is omitted when
// metadata is empty), and the header is padded with spaces to a multiple of
// 8 bytes. Names, metadata keys and values must be valid UTF-8, and no tensor
// may be named "__metadata__". Nothing is written if validation fails.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	header, err := encodeHeader(tensors, metadata)
	if err != nil {
		return err
	}
	var prefix [8]byte
	binary.LittleEndian.PutUint64(prefix[:], uint64(len(header)))
	if _, err := w.Write(prefix[:]); err != nil {
		return fmt.Errorf("safetensors: write header length: %w", err)
	}
	if _, err := w.Write(header); err != nil {
		return fmt.Errorf("safetensors: write header: %w", err)
	}
	for _, t := range tensors {
		if len(t.Data) == 0 {
			continue
		}
		if _, err := w.Write(t.Data); err != nil {
			return fmt.Errorf("safetensors: write tensor %q: %w", t.Name, err)
		}
	}
	return nil
}

// encodeHeader validates tensors and metadata and returns the padded
// JSON header.
func encodeHeader(tensors []Tensor, metadata map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	if len(metadata) > 0 {
		keys := make([]string, 0, len(metadata))
		for k, v := range metadata {
			if !utf8.ValidString(k) {
				return nil, fmt.Errorf("safetensors: metadata key %q is not valid UTF-8", k)
			}
			if !utf8.ValidString(v) {
				return nil, fmt.Errorf("safetensors: metadata value for key %q is not valid UTF-8", k)
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		writeString(&buf, metadataKey)
		buf.WriteString(":{")
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(&buf, k)
			buf.WriteByte(':')
			writeString(&buf, metadata[k])
		}
		buf.WriteByte('}')
		first = false
	}
	seen := make(map[string]bool, len(tensors))
	var offset uint64
	for i, t := range tensors {
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("safetensors: tensor %d has an empty name", i)
		case t.Name == metadataKey:
			return nil, fmt.Errorf("safetensors: tensor %d: name %q is reserved", i, metadataKey)
		case !utf8.ValidString(t.Name):
			return nil, fmt.Errorf("safetensors: tensor %d: name %q is not valid UTF-8", i, t.Name)
		case seen[t.Name]:
			return nil, fmt.Errorf("safetensors: duplicate tensor name %q", t.Name)
		}
		seen[t.Name] = true
		size, err := byteSize(t.DType, t.Shape)
		if err != nil {
			return nil, fmt.Errorf("safetensors: tensor %q: %w", t.Name, err)
		}
		if uint64(len(t.Data)) != size {
			return nil, fmt.Errorf("safetensors: tensor %q: data is %d bytes, shape %v of %s needs %d",
				t.Name, len(t.Data), t.Shape, t.DType, size)
		}
		end := offset + size
		if end < offset {
			return nil, fmt.Errorf("safetensors: tensor %q: total data size overflows", t.Name)
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		writeString(&buf, t.Name)
		buf.WriteString(`:{"dtype":`)
		writeString(&buf, t.DType)
		buf.WriteString(`,"shape":[`)
		for j, d := range t.Shape {
			if j > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(strconv.Itoa(d))
		}
		buf.WriteString(`],"data_offsets":[`)
		buf.WriteString(strconv.FormatUint(offset, 10))
		buf.WriteByte(',')
		buf.WriteString(strconv.FormatUint(end, 10))
		buf.WriteString("]}")
		offset = end
	}
	buf.WriteByte('}')
	for buf.Len()%8 != 0 {
		buf.WriteByte(' ')
	}
	if buf.Len() > maxHeader {
		return nil, fmt.Errorf("safetensors: header would be %d bytes, over the %d-byte limit",
			buf.Len(), maxHeader)
	}
	return buf.Bytes(), nil
}

// writeString appends s as a JSON string literal (without HTML escaping).
// s must be valid UTF-8.
func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // cannot fail for a string
	buf.Truncate(buf.Len() - 1) // drop the newline Encode appends
}

// Read parses a whole file's bytes. It validates strictly and returns an error (never panics) naming what is wrong.
//
// It rejects: files shorter than 8 bytes; a header length beyond the file or
// over 100 MB; a header that is not valid UTF-8, does not start with '{', is
// not a single JSON object (trailing whitespace is allowed) or repeats a key at
// any level; tensor entries with an empty name, an unknown dtype, a missing or
// unknown field, a dimension that is not a non-negative integer, data_offsets
// that are not [begin, end] with begin <= end <= buffer length, or a byte range
// whose length differs from product(shape)*dtype size (overflow included);
// data ranges that overlap, leave gaps or do not cover the whole buffer; and a
// "__metadata__" entry that is not an object of string values.
//
// Tensors are returned sorted by data offset (ties in header order), so a file
// from Write reads back in the order written. Each Data slice
// aliases b (with its capacity clipped to its length). metadata is nil when
// the file has no "__metadata__" entry.
func Read(b []byte) (tensors []Tensor, metadata map[string]string, err error) {
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("safetensors: file is %d bytes, shorter than the 8-byte header length", len(b))
	}
	n := binary.LittleEndian.Uint64(b[:8])
	if n > maxHeader {
		return nil, nil, fmt.Errorf("safetensors: header length %d exceeds the %d-byte limit", n, maxHeader)
	}
	if n > uint64(len(b)-8) {
		return nil, nil, fmt.Errorf("safetensors: header length %d exceeds file size %d", n, len(b))
	}
	header := b[8 : 8+n]
	data := b[8+n:]
	if !utf8.Valid(header) {
		return nil, nil, errors.New("safetensors: header is not valid UTF-8")
	}
	if len(header) == 0 || header[0] != '{' {
		return nil, nil, errors.New("safetensors: header is not a JSON object (must start with '{')")
	}

	type entry struct {
		Tensor
		begin, end uint64
	}
	var entries []entry
	dec := json.NewDecoder(bytes.NewReader(header))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // the '{' checked above
		return nil, nil, fmt.Errorf("safetensors: invalid JSON header: %w", err)
	}
	seen := make(map[string]bool)
	for dec.More() {
		name, err := readKey(dec)
		if err != nil {
			return nil, nil, fmt.Errorf("safetensors: invalid JSON header: %w", err)
		}
		if seen[name] {
			if name == metadataKey {
				return nil, nil, fmt.Errorf("safetensors: duplicate %q entry", metadataKey)
			}
			return nil, nil, fmt.Errorf("safetensors: duplicate tensor name %q", name)
		}
		seen[name] = true
		if name == metadataKey {
			metadata, err = readMetadata(dec)
			if err != nil {
				return nil, nil, fmt.Errorf("safetensors: %s: %w", metadataKey, err)
			}
			continue
		}
		if name == "" {
			return nil, nil, errors.New("safetensors: empty tensor name")
		}
		t, begin, end, err := readTensorInfo(dec)
		if err != nil {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: %w", name, err)
		}
		t.Name = name
		if end > uint64(len(data)) {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: data_offsets end %d is beyond the %d-byte data buffer",
				name, end, len(data))
		}
		size, err := byteSize(t.DType, t.Shape)
		if err != nil {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: %w", name, err)
		}
		if end-begin != size {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: data_offsets [%d,%d] span %d bytes, which does not match shape %v of %s (%d bytes)",
				name, begin, end, end-begin, t.Shape, t.DType, size)
		}
		entries = append(entries, entry{Tensor: t, begin: begin, end: end})
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, nil, fmt.Errorf("safetensors: invalid JSON header: %w", err)
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, nil, fmt.Errorf("safetensors: invalid JSON header after the object: %w", err)
		}
		return nil, nil, fmt.Errorf("safetensors: trailing data after the header object: %v", tok)
	}

	// The data ranges must tile the buffer exactly. A stable sort keeps
	// header order among empty tensors sharing an offset.
	slices.SortStableFunc(entries, func(x, y entry) int {
		if c := compareUint64(x.begin, y.begin); c != 0 {
			return c
		}
		return compareUint64(x.end, y.end)
	})
	var pos uint64
	tensors = make([]Tensor, len(entries))
	for i, e := range entries {
		switch {
		case e.begin < pos:
			return nil, nil, fmt.Errorf("safetensors: tensor %q: data range [%d,%d] overlaps the previous tensor (which ends at %d)",
				e.Name, e.begin, e.end, pos)
		case e.begin > pos:
			return nil, nil, fmt.Errorf("safetensors: data bytes [%d,%d) are not covered by any tensor (gap before tensor %q)",
				pos, e.begin, e.Name)
		}
		pos = e.end
		e.Data = data[e.begin:e.end:e.end]
		tensors[i] = e.Tensor
	}
	if pos != uint64(len(data)) {
		return nil, nil, fmt.Errorf("safetensors: data bytes [%d,%d) are not covered by any tensor", pos, len(data))
	}
	return tensors, metadata, nil
}

func compareUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// readKey reads an object key.
func readKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("expected an object key, got %v", tok)
	}
	return s, nil
}

// expectDelim reads a token that must be the delimiter d; what names the
// value for the error message.
func expectDelim(dec *json.Decoder, d json.Delim, what string) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if tok != d {
		kind := "an object"
		if d == '[' {
			kind = "an array"
		}
		return fmt.Errorf("%s must be %s, got %s", what, kind, describeToken(tok))
	}
	return nil
}

// describeToken renders a JSON token for error messages.
func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return string(v)
	case string:
		return strconv.Quote(v)
	case nil:
		return "null"
	}
	return fmt.Sprint(tok)
}

// readMetadata reads a JSON object of string values, rejecting duplicate keys.
func readMetadata(dec *json.Decoder) (map[string]string, error) {
	if err := expectDelim(dec, '{', "value"); err != nil {
		return nil, err
	}
	m := make(map[string]string)
	for dec.More() {
		k, err := readKey(dec)
		if err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("duplicate key %q", k)
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		v, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("value of key %q must be a string, got %s", k, describeToken(tok))
		}
		m[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return m, nil
}

// readTensorInfo reads one tensor entry {"dtype", "shape", "data_offsets"}.
// It checks the fields' presence and types, the dtype name, the dimensions'
// signs and begin <= end; sizes are checked by the caller.
func readTensorInfo(dec *json.Decoder) (t Tensor, begin, end uint64, err error) {
	if err := expectDelim(dec, '{', "entry"); err != nil {
		return t, 0, 0, err
	}
	var haveDType, haveShape, haveOffsets bool
	var offsets []uint64
	for dec.More() {
		k, err := readKey(dec)
		if err != nil {
			return t, 0, 0, fmt.Errorf("invalid JSON: %w", err)
		}
		switch k {
		case "dtype":
			if haveDType {
				return t, 0, 0, errors.New(`duplicate key "dtype"`)
			}
			haveDType = true
			tok, err := dec.Token()
			if err != nil {
				return t, 0, 0, fmt.Errorf("invalid JSON: %w", err)
			}
			s, ok := tok.(string)
			if !ok {
				return t, 0, 0, fmt.Errorf("dtype must be a string, got %s", describeToken(tok))
			}
			if _, known := dtypeSizes[s]; !known {
				return t, 0, 0, fmt.Errorf("unknown dtype %q", s)
			}
			t.DType = s
		case "shape":
			if haveShape {
				return t, 0, 0, errors.New(`duplicate key "shape"`)
			}
			haveShape = true
			t.Shape = []int{}
			err := readNumbers(dec, "shape", func(num json.Number) error {
				d, err := strconv.ParseInt(num.String(), 10, 0)
				if err != nil {
					return fmt.Errorf("shape dimension %s is not an integer that fits in int", num)
				}
				if d < 0 {
					return fmt.Errorf("negative dimension %d in shape", d)
				}
				t.Shape = append(t.Shape, int(d))
				return nil
			})
			if err != nil {
				return t, 0, 0, err
			}
		case "data_offsets":
			if haveOffsets {
				return t, 0, 0, errors.New(`duplicate key "data_offsets"`)
			}
			haveOffsets = true
			err := readNumbers(dec, "data_offsets", func(num json.Number) error {
				if len(offsets) == 2 {
					return errors.New("data_offsets must be [begin, end], got more than 2 numbers")
				}
				o, err := strconv.ParseUint(num.String(), 10, 64)
				if err != nil {
					return fmt.Errorf("data offset %s is not a non-negative 64-bit integer", num)
				}
				offsets = append(offsets, o)
				return nil
			})
			if err != nil {
				return t, 0, 0, err
			}
			if len(offsets) != 2 {
				return t, 0, 0, fmt.Errorf("data_offsets must be [begin, end], got %d numbers", len(offsets))
			}
		default:
			return t, 0, 0, fmt.Errorf("unknown field %q", k)
		}
	}
	if _, err := dec.Token(); err != nil {
		return t, 0, 0, fmt.Errorf("invalid JSON: %w", err)
	}
	switch {
	case !haveDType:
		return t, 0, 0, errors.New(`missing field "dtype"`)
	case !haveShape:
		return t, 0, 0, errors.New(`missing field "shape"`)
	case !haveOffsets:
		return t, 0, 0, errors.New(`missing field "data_offsets"`)
	}
	begin, end = offsets[0], offsets[1]
	if begin > end {
		return t, 0, 0, fmt.Errorf("data_offsets begin %d > end %d", begin, end)
	}
	return t, begin, end, nil
}

// readNumbers reads a JSON array of numbers named what, calling f on each.
func readNumbers(dec *json.Decoder, what string, f func(json.Number) error) error {
	if err := expectDelim(dec, '[', what); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("invalid JSON: %w", err)
		}
		num, ok := tok.(json.Number)
		if !ok {
			return fmt.Errorf("%s must contain only numbers, got %s", what, describeToken(tok))
		}
		if err := f(num); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return nil
}

// F32 returns a tensor of dtype F32 holding v little-endian encoded.
// len(v) should equal the product of shape; Write checks it.
func F32(name string, shape []int, v []float32) Tensor {
	data := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
	}
	return Tensor{Name: name, DType: "F32", Shape: slices.Clone(shape), Data: data}
}

// Float32s decodes the data of an F32 tensor. It fails if the dtype is not
// F32 or the data length does not match the shape.
func (t Tensor) Float32s() ([]float32, error) {
	if err := t.checkDecode("F32"); err != nil {
		return nil, err
	}
	v := make([]float32, len(t.Data)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v, nil
}

// I64 returns a tensor of dtype I64 holding v little-endian encoded.
// len(v) should equal the product of shape; Write checks it.
func I64(name string, shape []int, v []int64) Tensor {
	data := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(data[8*i:], uint64(x))
	}
	return Tensor{Name: name, DType: "I64", Shape: slices.Clone(shape), Data: data}
}

// Int64s decodes the data of an I64 tensor. It fails if the dtype is not
// I64 or the data length does not match the shape.
func (t Tensor) Int64s() ([]int64, error) {
	if err := t.checkDecode("I64"); err != nil {
		return nil, err
	}
	v := make([]int64, len(t.Data)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(t.Data[8*i:]))
	}
	return v, nil
}

// U8 returns a tensor of dtype U8 holding a copy of v.
// len(v) should equal the product of shape; Write checks it.
func U8(name string, shape []int, v []byte) Tensor {
	return Tensor{Name: name, DType: "U8", Shape: slices.Clone(shape), Data: append([]byte{}, v...)}
}

// checkDecode verifies that t has dtype want and data matching its shape.
func (t Tensor) checkDecode(want string) error {
	if t.DType != want {
		return fmt.Errorf("safetensors: tensor %q has dtype %q, not %s", t.Name, t.DType, want)
	}
	size, err := byteSize(t.DType, t.Shape)
	if err != nil {
		return fmt.Errorf("safetensors: tensor %q: %w", t.Name, err)
	}
	if uint64(len(t.Data)) != size {
		return fmt.Errorf("safetensors: tensor %q: data is %d bytes, shape %v of %s needs %d",
			t.Name, len(t.Data), t.Shape, t.DType, size)
	}
	return nil
}

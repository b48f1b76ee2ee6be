package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// Version is the GGUF version this package writes and reads.
const Version = 3

// Alignment is the alignment of the tensor data, in bytes (GGUF's default,
// general.alignment).
const Alignment = 32

// magic opens every GGUF file.
const magic = "GGUF"

// ValueType is the type of a metadata value, as GGUF numbers them.
type ValueType uint32

// The metadata value types (only those this package writes are named).
const (
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
)

// KV is one metadata entry. Value is a uint32, int32, float32, bool,
// string, uint64, or a []string, []int32 or []float32 (GGUF arrays).
type KV struct {
	Key   string
	Value any
}

// TensorType is the element type of a tensor, as ggml numbers them.
type TensorType uint32

// The tensor types this package writes.
const (
	F32  TensorType = 0
	F16  TensorType = 1
	Q8_0 TensorType = 8
)

// String is ggml's name of the type: "f32", "f16" or "q8_0".
func (t TensorType) String() string {
	switch t {
	case F32:
		return "f32"
	case F16:
		return "f16"
	case Q8_0:
		return "q8_0"
	}
	return fmt.Sprintf("TensorType(%d)", uint32(t))
}

// ParseType returns the tensor type of its name: f32, f16 or q8_0.
func ParseType(name string) (TensorType, error) {
	for _, t := range []TensorType{F32, F16, Q8_0} {
		if t.String() == name {
			return t, nil
		}
	}
	return 0, fmt.Errorf("type %q is not f32, f16 or q8_0", name)
}

// Tensor is one tensor of a file: its name, its dimensions in ggml's order
// (the fastest-varying first: a row-major (rows, cols) matrix is {cols,
// rows}), its type and its encoded bytes (Encode).
type Tensor struct {
	Name string
	Dims []uint64
	Type TensorType
	Data []byte
}

// Elements is the number of values the tensor holds.
func (t Tensor) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// File is a GGUF file's contents: the metadata in order, then the tensors
// in order.
type File struct {
	KV      []KV
	Tensors []Tensor
}

// Lookup returns the value of a metadata key and whether the file has it.
func (f *File) Lookup(key string) (any, bool) {
	for _, kv := range f.KV {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Tensor returns the named tensor and whether the file has it.
func (f *File) Tensor(name string) (Tensor, bool) {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return Tensor{}, false
}

// WriteTo writes the file in GGUF version 3: the header, the metadata, the
// tensor infos, then the data, each tensor's bytes starting at a multiple
// of Alignment. It fails on a value of a type GGUF has no form for and on
// a tensor whose bytes do not match its dimensions and type.
func (f *File) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: bufio.NewWriterSize(w, 1<<20)}
	e := encoder{w: cw}
	e.bytes([]byte(magic))
	e.u32(Version)
	e.u64(uint64(len(f.Tensors)))
	e.u64(uint64(len(f.KV)))
	for _, kv := range f.KV {
		e.str(kv.Key)
		if err := e.value(kv.Value); err != nil {
			return cw.n, fmt.Errorf("gguf: key %s: %w", kv.Key, err)
		}
	}
	offset := uint64(0)
	for _, t := range f.Tensors {
		if want, err := t.Type.size(t.Elements(), t.Dims); err != nil {
			return cw.n, fmt.Errorf("gguf: tensor %s: %w", t.Name, err)
		} else if uint64(len(t.Data)) != want {
			return cw.n, fmt.Errorf("gguf: tensor %s holds %d bytes, its dimensions %v of %v take %d", t.Name, len(t.Data), t.Dims, t.Type, want)
		}
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(offset)
		offset = align(offset + uint64(len(t.Data)))
	}
	e.pad()
	for _, t := range f.Tensors {
		e.bytes(t.Data)
		e.pad()
	}
	if e.err == nil {
		e.err = cw.w.(*bufio.Writer).Flush()
	}
	return cw.n, e.err
}

// size is the bytes of n values of type t in a tensor of dims.
func (t TensorType) size(n uint64, dims []uint64) (uint64, error) {
	switch t {
	case F32:
		return 4 * n, nil
	case F16:
		return 2 * n, nil
	case Q8_0:
		if len(dims) == 0 || dims[0]%q8Block != 0 {
			return 0, fmt.Errorf("q8_0 needs rows of a multiple of %d values, got %v", q8Block, dims)
		}
		return n / q8Block * q8BlockBytes, nil
	}
	return 0, fmt.Errorf("unknown tensor type %d", uint32(t))
}

func align(n uint64) uint64 { return (n + Alignment - 1) / Alignment * Alignment }

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// encoder writes GGUF's little-endian values, keeping the first error.
type encoder struct {
	w   *countWriter
	err error
}

func (e *encoder) bytes(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *encoder) u32(v uint32) { e.bytes(binary.LittleEndian.AppendUint32(nil, v)) }
func (e *encoder) u64(v uint64) { e.bytes(binary.LittleEndian.AppendUint64(nil, v)) }
func (e *encoder) str(s string) { e.u64(uint64(len(s))); e.bytes([]byte(s)) }

func (e *encoder) pad() {
	if n := align(uint64(e.w.n)) - uint64(e.w.n); n > 0 {
		e.bytes(make([]byte, n))
	}
}

func (e *encoder) value(v any) error {
	switch v := v.(type) {
	case uint32:
		e.u32(uint32(TypeUint32))
		e.u32(v)
	case int32:
		e.u32(uint32(TypeInt32))
		e.u32(uint32(v))
	case uint64:
		e.u32(uint32(TypeUint64))
		e.u64(v)
	case float32:
		e.u32(uint32(TypeFloat32))
		e.u32(math.Float32bits(v))
	case bool:
		e.u32(uint32(TypeBool))
		if v {
			e.bytes([]byte{1})
		} else {
			e.bytes([]byte{0})
		}
	case string:
		e.u32(uint32(TypeString))
		e.str(v)
	case []string:
		e.u32(uint32(TypeArray))
		e.u32(uint32(TypeString))
		e.u64(uint64(len(v)))
		for _, s := range v {
			e.str(s)
		}
	case []int32:
		e.u32(uint32(TypeArray))
		e.u32(uint32(TypeInt32))
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u32(uint32(x))
		}
	case []float32:
		e.u32(uint32(TypeArray))
		e.u32(uint32(TypeFloat32))
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u32(math.Float32bits(x))
		}
	default:
		return fmt.Errorf("a value of type %T has no GGUF form", v)
	}
	return nil
}

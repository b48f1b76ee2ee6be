package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// maxCount bounds the counts and lengths Read accepts, so that a corrupt
// file fails with an error instead of an allocation of its claimed size.
const maxCount = 1 << 31

// Read parses a whole GGUF version 3 file: its metadata and its tensors'
// bytes. The metadata's arrays come back as []string, []int32 or
// []float32 (other element types are refused).
func Read(r io.Reader) (*File, error) {
	d := decoder{r: bufio.NewReaderSize(r, 1<<20)}
	if m := d.bytes(4); d.err == nil && string(m) != magic {
		return nil, fmt.Errorf("gguf: not a GGUF file (it starts %q)", m)
	}
	if v := d.u32(); d.err == nil && v != Version {
		return nil, fmt.Errorf("gguf: version %d, want %d", v, Version)
	}
	nt, nkv := d.count(), d.count()
	f := &File{}
	for i := uint64(0); i < nkv && d.err == nil; i++ {
		key := d.str()
		v := d.value(ValueType(d.u32()))
		f.KV = append(f.KV, KV{Key: key, Value: v})
	}
	offsets := make([]uint64, 0, nt)
	for i := uint64(0); i < nt && d.err == nil; i++ {
		t := Tensor{Name: d.str()}
		nd := d.u32()
		if nd > 4 {
			return nil, fmt.Errorf("gguf: tensor %s has %d dimensions", t.Name, nd)
		}
		for j := uint32(0); j < nd; j++ {
			t.Dims = append(t.Dims, d.u64())
		}
		t.Type = TensorType(d.u32())
		offsets = append(offsets, d.u64())
		f.Tensors = append(f.Tensors, t)
	}
	d.skip(align(d.n) - d.n)
	start := d.n
	for i := range f.Tensors {
		t := &f.Tensors[i]
		size, err := t.Type.size(t.Elements(), t.Dims)
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %s: %w", t.Name, err)
		}
		if d.err == nil && d.n-start != offsets[i] {
			return nil, fmt.Errorf("gguf: tensor %s at offset %d, want %d", t.Name, offsets[i], d.n-start)
		}
		if size > maxCount {
			return nil, fmt.Errorf("gguf: tensor %s of %d bytes", t.Name, size)
		}
		t.Data = d.bytes(int(size))
		d.skip(align(d.n-start) - (d.n - start))
	}
	if d.err != nil {
		if errors.Is(d.err, io.EOF) {
			d.err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("gguf: %w", d.err)
	}
	return f, nil
}

// decoder reads GGUF's little-endian values, keeping the first error.
type decoder struct {
	r   *bufio.Reader
	n   uint64
	err error
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	b := make([]byte, n)
	_, d.err = io.ReadFull(d.r, b)
	d.n += uint64(n)
	return b
}

func (d *decoder) skip(n uint64) { d.bytes(int(n)) }

func (d *decoder) u32() uint32 {
	if b := d.bytes(4); d.err == nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if b := d.bytes(8); d.err == nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) count() uint64 {
	n := d.u64()
	if d.err == nil && n > maxCount {
		d.err = fmt.Errorf("a count of %d", n)
	}
	return n
}

func (d *decoder) str() string { return string(d.bytes(int(d.count()))) }

func (d *decoder) value(t ValueType) any {
	switch t {
	case TypeUint32:
		return d.u32()
	case TypeInt32:
		return int32(d.u32())
	case TypeUint64:
		return d.u64()
	case TypeFloat32:
		return math.Float32frombits(d.u32())
	case TypeBool:
		b := d.bytes(1)
		return d.err == nil && b[0] != 0
	case TypeString:
		return d.str()
	case TypeArray:
		et, n := ValueType(d.u32()), d.count()
		switch et {
		case TypeString:
			out := make([]string, 0, min(n, 1<<16))
			for i := uint64(0); i < n && d.err == nil; i++ {
				out = append(out, d.str())
			}
			return out
		case TypeInt32:
			out := make([]int32, 0, min(n, 1<<16))
			for i := uint64(0); i < n && d.err == nil; i++ {
				out = append(out, int32(d.u32()))
			}
			return out
		case TypeFloat32:
			out := make([]float32, 0, min(n, 1<<16))
			for i := uint64(0); i < n && d.err == nil; i++ {
				out = append(out, math.Float32frombits(d.u32()))
			}
			return out
		}
		if d.err == nil {
			d.err = fmt.Errorf("arrays of value type %d are not read", et)
		}
	default:
		if d.err == nil {
			d.err = fmt.Errorf("value type %d is not read", t)
		}
	}
	return nil
}

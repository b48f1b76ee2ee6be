package gguf

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/x448/float16"
)

// q8_0's block: 32 values that share one float16 scale, each an int8.
const (
	q8Block      = 32
	q8BlockBytes = 2 + q8Block
)

// Encode returns the tensor of values (row-major, the last of dims the
// fastest; dims in ggml's order, the fastest first) in type t:
//   - F32: the values as they are;
//   - F16: each rounded to the nearest IEEE half (ties to even), as ggml's
//     conversion does;
//   - Q8_0: ggml's blocks of 32 values along the row, each the float16
//     scale d = max|x|/127 and the 32 bytes round(x/d) (ggml's reference
//     quantizer, quantize_row_q8_0_ref).
func Encode(name string, dims []uint64, t TensorType, values []float32) (Tensor, error) {
	tn := Tensor{Name: name, Dims: dims, Type: t}
	if uint64(len(values)) != tn.Elements() {
		return Tensor{}, fmt.Errorf("gguf: tensor %s: %d values for dimensions %v", name, len(values), dims)
	}
	switch t {
	case F32:
		tn.Data = make([]byte, 4*len(values))
		for i, v := range values {
			binary.LittleEndian.PutUint32(tn.Data[4*i:], math.Float32bits(v))
		}
	case F16:
		tn.Data = make([]byte, 2*len(values))
		for i, v := range values {
			binary.LittleEndian.PutUint16(tn.Data[2*i:], float16.Fromfloat32(v).Bits())
		}
	case Q8_0:
		if _, err := t.size(tn.Elements(), dims); err != nil {
			return Tensor{}, fmt.Errorf("gguf: tensor %s: %w", name, err)
		}
		tn.Data = make([]byte, 0, len(values)/q8Block*q8BlockBytes)
		for b := 0; b < len(values); b += q8Block {
			tn.Data = appendQ8Block(tn.Data, values[b:b+q8Block])
		}
	default:
		return Tensor{}, fmt.Errorf("gguf: tensor %s: unknown type %d", name, uint32(t))
	}
	return tn, nil
}

// appendQ8Block appends one q8_0 block of 32 values.
func appendQ8Block(out []byte, x []float32) []byte {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	id := float32(0)
	if d != 0 {
		id = 1 / d
	}
	out = binary.LittleEndian.AppendUint16(out, float16.Fromfloat32(d).Bits())
	for _, v := range x {
		out = append(out, byte(int8(math.Round(float64(v*id)))))
	}
	return out
}

// Decode returns the values of a tensor as float32, row-major: the
// inverse of Encode for F32, and the values F16 and Q8_0 stand for
// (each int8 times its block's scale, as ggml dequantizes them).
func Decode(t Tensor) ([]float32, error) {
	n := t.Elements()
	if want, err := t.Type.size(n, t.Dims); err != nil {
		return nil, fmt.Errorf("gguf: tensor %s: %w", t.Name, err)
	} else if uint64(len(t.Data)) != want {
		return nil, fmt.Errorf("gguf: tensor %s holds %d bytes, want %d", t.Name, len(t.Data), want)
	}
	out := make([]float32, n)
	switch t.Type {
	case F32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
		}
	case F16:
		for i := range out {
			out[i] = float16.Frombits(binary.LittleEndian.Uint16(t.Data[2*i:])).Float32()
		}
	case Q8_0:
		for b := 0; b < len(out)/q8Block; b++ {
			blk := t.Data[b*q8BlockBytes:]
			d := float16.Frombits(binary.LittleEndian.Uint16(blk)).Float32()
			for i := 0; i < q8Block; i++ {
				out[b*q8Block+i] = float32(int8(blk[2+i])) * d
			}
		}
	}
	return out, nil
}

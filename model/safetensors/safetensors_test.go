package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// rawFile builds a safetensors file from a raw header string and data buffer,
// without padding or any validation.
func rawFile(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, data...)
}

// mustWrite writes tensors and metadata to a fresh buffer, failing the test on error.
func mustWrite(t testing.TB, tensors []Tensor, metadata map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, tensors, metadata); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

// equalTensors reports how got differs from want ("" if equal); nil and
// empty shapes, data and metadata maps are treated as equal.
func equalTensors(got, want []Tensor) string {
	if len(got) != len(want) {
		return fmt.Sprintf("got %d tensors, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.DType != w.DType || fmt.Sprint(g.Shape) != fmt.Sprint(w.Shape) ||
			len(g.Shape) != len(w.Shape) || !bytes.Equal(g.Data, w.Data) {
			return fmt.Sprintf("tensor %d: got {%q %s %v % x}, want {%q %s %v % x}",
				i, g.Name, g.DType, g.Shape, g.Data, w.Name, w.DType, w.Shape, w.Data)
		}
	}
	return ""
}

func equalMetadata(got, want map[string]string) string {
	if len(got) != len(want) {
		return fmt.Sprintf("got metadata %v, want %v", got, want)
	}
	for k, v := range want {
		if gv, ok := got[k]; !ok || gv != v {
			return fmt.Sprintf("got metadata %v, want %v", got, want)
		}
	}
	return ""
}

func TestRoundTrip(t *testing.T) {
	u32 := Tensor{Name: "u32", DType: "U32", Shape: []int{1, 1, 2}, Data: []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}}
	u64 := Tensor{Name: "u64", DType: "U64", Shape: []int{1}, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}}
	i32 := Tensor{Name: "i32", DType: "I32", Shape: []int{2, 2}, Data: bytes.Repeat([]byte{0xfe, 0xff, 0xff, 0xff}, 4)}
	f64 := Tensor{Name: "f64", DType: "F64", Shape: []int{2}, Data: binary.LittleEndian.AppendUint64(
		binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.Pi)), math.Float64bits(math.Copysign(0, -1)))}
	tests := []struct {
		name     string
		tensors  []Tensor
		metadata map[string]string
	}{
		{"no tensors", nil, nil},
		{"metadata only", nil, map[string]string{"format": "pt"}},
		{"all dtypes", []Tensor{
			F32("weight", []int{2, 3}, []float32{1, -2, 3.5, float32(math.Inf(1)), 0, 1e-30}),
			I64("step", []int{3}, []int64{0, -1, math.MaxInt64}),
			U8("mask", []int{5}, []byte{0, 1, 2, 254, 255}),
			u32, u64, i32, f64,
		}, map[string]string{"format": "pt", "z": "last", "a": "first", "": "empty key", "unicode": "héllo ✓ <&>"}},
		{"scalar and empty", []Tensor{
			F32("scalar", []int{}, []float32{42}),
			F32("empty", []int{0}, nil),
			I64("empty2", []int{3, 0}, nil),
			U8("after", []int{2}, []byte{7, 8}),
		}, nil},
		{"only empty tensors", []Tensor{
			U8("e1", []int{0}, nil),
			U8("e2", []int{0, 5}, nil),
		}, nil},
		{"odd names", []Tensor{
			U8("z.first", []int{1}, []byte{1}),
			U8("a\"quote\\back\nslash\u0000", []int{1}, []byte{2}),
			U8("ünïcödé/✓", []int{1}, []byte{3}),
		}, map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mustWrite(t, tc.tensors, tc.metadata)
			if n := binary.LittleEndian.Uint64(b); n%8 != 0 {
				t.Errorf("header length %d is not a multiple of 8", n)
			}
			got, md, err := Read(b)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if d := equalTensors(got, tc.tensors); d != "" {
				t.Error(d)
			}
			if d := equalMetadata(md, tc.metadata); d != "" {
				t.Error(d)
			}
			if len(tc.metadata) == 0 && md != nil {
				t.Errorf("metadata = %v, want nil when none was written", md)
			}
		})
	}
}

func TestHelpers(t *testing.T) {
	f := F32("f", []int{2, 2}, []float32{1, 2, -3, float32(math.NaN())})
	fv, err := f.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	if fv[0] != 1 || fv[1] != 2 || fv[2] != -3 || !math.IsNaN(float64(fv[3])) {
		t.Errorf("Float32s = %v", fv)
	}
	i := I64("i", []int{2}, []int64{math.MinInt64, 5})
	iv, err := i.Int64s()
	if err != nil {
		t.Fatal(err)
	}
	if iv[0] != math.MinInt64 || iv[1] != 5 {
		t.Errorf("Int64s = %v", iv)
	}
	if !bytes.Equal(i.Data[:8], []byte{0, 0, 0, 0, 0, 0, 0, 0x80}) {
		t.Errorf("I64 encoding of MinInt64 = % x, want little-endian", i.Data[:8])
	}

	src := []byte{1, 2, 3}
	u := U8("u", []int{3}, src)
	src[0] = 99
	if u.Data[0] != 1 {
		t.Error("U8 aliases its input")
	}

	errCases := []struct {
		name string
		call func() error
		want string
	}{
		{"Float32s of I64", func() error { _, err := i.Float32s(); return err }, `dtype "I64", not F32`},
		{"Int64s of F32", func() error { _, err := f.Int64s(); return err }, `dtype "F32", not I64`},
		{"Int64s of U8", func() error { _, err := u.Int64s(); return err }, "not I64"},
		{"Float32s short data", func() error {
			_, err := Tensor{Name: "x", DType: "F32", Shape: []int{2}, Data: make([]byte, 7)}.Float32s()
			return err
		}, "data is 7 bytes"},
		{"Int64s shape mismatch", func() error {
			_, err := Tensor{Name: "x", DType: "I64", Shape: []int{3}, Data: make([]byte, 16)}.Int64s()
			return err
		}, "needs 24"},
	}
	for _, tc := range errCases {
		err := tc.call()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want containing %q", tc.name, err, tc.want)
		}
	}
}

func TestDeterministic(t *testing.T) {
	md := make(map[string]string)
	for i := range 50 {
		md[fmt.Sprintf("key%02d", i)] = fmt.Sprint(i)
	}
	tensors := []Tensor{
		F32("zeta", []int{2}, []float32{1, 2}),
		I64("alpha", []int{1}, []int64{3}),
		U8("mid", []int{0}, nil),
	}
	first := mustWrite(t, tensors, md)
	for range 20 {
		// A fresh copy of the map gets a fresh iteration order.
		md2 := make(map[string]string)
		for k, v := range md {
			md2[k] = v
		}
		if again := mustWrite(t, tensors, md2); !bytes.Equal(again, first) {
			t.Fatalf("output differs between writes:\n%q\n%q", first, again)
		}
	}
	// Tensors are emitted in the given order, not sorted.
	n := binary.LittleEndian.Uint64(first)
	header := string(first[8 : 8+n])
	if z, a := strings.Index(header, `"zeta"`), strings.Index(header, `"alpha"`); z < 0 || a < 0 || z > a {
		t.Errorf("header does not list zeta before alpha: %s", header)
	}
	if k0, k1 := strings.Index(header, `"key00"`), strings.Index(header, `"key49"`); k0 < 0 || k1 < 0 || k0 > k1 {
		t.Errorf("metadata keys not sorted: %s", header)
	}
}

func TestGolden(t *testing.T) {
	// F32 "a", shape [2], values 1 and 2. The header is 54 bytes of JSON
	// padded with 2 spaces to 56 = 0x38.
	header := `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}` + "  "
	if len(header) != 56 {
		t.Fatalf("test bug: golden header is %d bytes", len(header))
	}
	want := []byte{0x38, 0, 0, 0, 0, 0, 0, 0}
	want = append(want, header...)
	want = append(want, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40)

	got := mustWrite(t, []Tensor{F32("a", []int{2}, []float32{1, 2})}, nil)
	if !bytes.Equal(got, want) {
		t.Errorf("golden mismatch:\ngot  %q\nwant %q", got, want)
	}

	// With metadata: "__metadata__" first, keys sorted, HTML not escaped.
	hdr := `{"__metadata__":{"a":"<1>","b":"2"},"x":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}`
	pad := (8 - len(hdr)%8) % 8
	want2 := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)+pad))
	want2 = append(want2, hdr+strings.Repeat(" ", pad)...)
	want2 = append(want2, 9)
	got2 := mustWrite(t, []Tensor{U8("x", nil, []byte{9})}, map[string]string{"b": "2", "a": "<1>"})
	if !bytes.Equal(got2, want2) {
		t.Errorf("golden with metadata mismatch:\ngot  %q\nwant %q", got2, want2)
	}

	// The hand-made bytes must also read back.
	tensors, _, err := Read(want)
	if err != nil {
		t.Fatal(err)
	}
	v, err := tensors[0].Float32s()
	if err != nil || len(v) != 2 || v[0] != 1 || v[1] != 2 {
		t.Errorf("read golden = %v, %v", v, err)
	}
}

// entry renders one tensor header entry.
func entry(name, dtype, shape string, begin, end int) string {
	return fmt.Sprintf(`%q:{"dtype":%q,"shape":%s,"data_offsets":[%d,%d]}`, name, dtype, shape, begin, end)
}

func TestReadErrors(t *testing.T) {
	a8 := entry("a", "F32", "[2]", 0, 8) // valid for an 8-byte buffer
	d8 := make([]byte, 8)
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"empty file", nil, "shorter than the 8-byte header length"},
		{"7 bytes", make([]byte, 7), "file is 7 bytes"},
		{"header beyond file", append(binary.LittleEndian.AppendUint64(nil, 1000), "{}"...), "header length 1000 exceeds file size 10"},
		{"header absurd", binary.LittleEndian.AppendUint64(nil, 123456789), "header length 123456789 exceeds the 100000000-byte limit"},
		{"header max uint64", binary.LittleEndian.AppendUint64(nil, math.MaxUint64), "exceeds the 100000000-byte limit"},
		{"empty header", rawFile("", nil), "not a JSON object"},
		{"invalid utf8", rawFile("{\"\xff\":1}", nil), "not valid UTF-8"},
		{"array header", rawFile("[1,2]", nil), "not a JSON object"},
		{"leading space", rawFile(" {}", nil), "not a JSON object"},
		{"truncated json", rawFile(`{"a":`, nil), "invalid JSON"},
		{"unterminated object", rawFile(`{"a":{"dtype":"U8","shape":[],"data_offsets":[0,1]}`, []byte{1}), "invalid JSON"},
		{"bad json syntax", rawFile(`{"a" 1}`, nil), "invalid JSON"},
		{"trailing data", rawFile(`{}{}`, nil), "trailing data"},
		{"trailing garbage", rawFile(`{} x`, nil), "invalid JSON header after the object"},
		{"tensor not object", rawFile(`{"a":1}`, nil), `tensor "a": entry must be an object, got 1`},
		{"tensor is array", rawFile(`{"a":[]}`, nil), "entry must be an object"},
		{"unknown dtype", rawFile(entryObj("a", "F16", "[2]", 0, 4), make([]byte, 4)), `unknown dtype "F16"`},
		{"dtype not string", rawFile(`{"a":{"dtype":4,"shape":[],"data_offsets":[0,4]}}`, make([]byte, 4)), "dtype must be a string"},
		{"negative dim", rawFile(entryObj("a", "F32", "[-2]", 0, 8), d8), "negative dimension -2"},
		{"fractional dim", rawFile(entryObj("a", "F32", "[1.5]", 0, 8), d8), "not an integer"},
		{"huge dim", rawFile(entryObj("a", "U8", "[99999999999999999999]", 0, 8), d8), "not an integer that fits"},
		{"shape not array", rawFile(entryObj("a", "F32", "2", 0, 8), d8), "shape must be an array"},
		{"shape of strings", rawFile(entryObj("a", "F32", `["2"]`, 0, 8), d8), "shape must contain only numbers"},
		{"missing dtype", rawFile(`{"a":{"shape":[2],"data_offsets":[0,8]}}`, d8), `missing field "dtype"`},
		{"missing shape", rawFile(`{"a":{"dtype":"F32","data_offsets":[0,8]}}`, d8), `missing field "shape"`},
		{"missing offsets", rawFile(`{"a":{"dtype":"F32","shape":[2]}}`, d8), `missing field "data_offsets"`},
		{"unknown field", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"offsets":[0,8]}}`, d8), `unknown field "offsets"`},
		{"duplicate field", rawFile(`{"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, d8), `duplicate key "dtype"`},
		{"one offset", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[8]}}`, d8), "data_offsets must be [begin, end], got 1"},
		{"three offsets", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8,8]}}`, d8), "more than 2"},
		{"offsets not array", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":{}}}`, d8), "data_offsets must be an array"},
		{"negative offset", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[-1,7]}}`, d8), "not a non-negative 64-bit integer"},
		{"begin after end", rawFile(entryObj("a", "F32", "[2]", 8, 0), d8), "begin 8 > end 0"},
		{"end beyond buffer", rawFile(entryObj("a", "F32", "[2]", 0, 8), make([]byte, 4)), "end 8 is beyond the 4-byte data buffer"},
		{"size mismatch", rawFile(entryObj("a", "F32", "[3]", 0, 8), d8), "does not match shape [3] of F32 (12 bytes)"},
		{"product overflow", rawFile(entryObj("a", "F64", "[4294967296,4294967296]", 0, 8), d8), "overflows"},
		{"dtype size overflow", rawFile(entryObj("a", "F64", "[2305843009213693952]", 0, 8), d8), "overflows"},
		{"overlap", rawFile("{"+entry("a", "F32", "[2]", 0, 8)+","+entry("b", "F32", "[2]", 4, 12)+"}", make([]byte, 12)), `tensor "b": data range [4,12] overlaps`},
		{"same range twice", rawFile("{"+entry("a", "F32", "[2]", 0, 8)+","+entry("b", "F32", "[2]", 0, 8)+"}", d8), "overlaps"},
		{"gap", rawFile("{"+entry("a", "F32", "[1]", 0, 4)+","+entry("b", "F32", "[1]", 8, 12)+"}", make([]byte, 12)), "data bytes [4,8) are not covered"},
		{"gap at start", rawFile("{"+entry("a", "F32", "[1]", 4, 8)+"}", d8), "data bytes [0,4) are not covered"},
		{"uncovered tail", rawFile("{"+entry("a", "F32", "[1]", 0, 4)+"}", d8), "data bytes [4,8) are not covered"},
		{"data without tensors", rawFile("{}", []byte{1}), "data bytes [0,1) are not covered"},
		{"duplicate name", rawFile("{"+a8+","+a8+"}", make([]byte, 16)), `duplicate tensor name "a"`},
		{"duplicate name escaped", rawFile("{"+a8+`,"\u0061":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, make([]byte, 16)), `duplicate tensor name "a"`},
		{"empty name", rawFile("{"+entry("", "F32", "[2]", 0, 8)+"}", d8), "empty tensor name"},
		{"metadata not object", rawFile(`{"__metadata__":"x"}`, nil), `__metadata__: value must be an object, got "x"`},
		{"metadata null", rawFile(`{"__metadata__":null}`, nil), "value must be an object, got null"},
		{"metadata number value", rawFile(`{"__metadata__":{"k":1}}`, nil), `value of key "k" must be a string, got 1`},
		{"metadata nested", rawFile(`{"__metadata__":{"k":{"x":"y"}}}`, nil), `value of key "k" must be a string, got an object`},
		{"metadata duplicate key", rawFile(`{"__metadata__":{"k":"1","k":"2"}}`, nil), `duplicate key "k"`},
		{"metadata twice", rawFile(`{"__metadata__":{},"__metadata__":{}}`, nil), `duplicate "__metadata__" entry`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tensors, md, err := Read(tc.file)
			if err == nil {
				t.Fatalf("no error; got tensors %v metadata %v", tensors, md)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "safetensors: ") {
				t.Errorf("error %q lacks the safetensors: prefix", err)
			}
			if tensors != nil || md != nil {
				t.Errorf("results not nil on error: %v %v", tensors, md)
			}
		})
	}
}

func TestReadAccepts(t *testing.T) {
	// Inputs that are unusual but valid; the results must be as stated.
	type acceptCase struct {
		name  string
		file  []byte
		names []string
	}
	tests := []acceptCase{
		{"out of order offsets sorted", rawFile("{"+entry("b", "U8", "[1]", 1, 2)+","+entry("a", "U8", "[1]", 0, 1)+"}", []byte{1, 2}), []string{"a", "b"}},
		{"empty tensors keep header order", rawFile("{"+entry("z", "U8", "[0]", 0, 0)+","+entry("y", "U8", "[0]", 0, 0)+","+entry("x", "U8", "[1]", 0, 1)+"}", []byte{1}), []string{"z", "y", "x"}},
		{"whitespace and newline padding", rawFile("{ \"a\" : {\"data_offsets\":[0,1], \"shape\":[1],\"dtype\":\"U8\"} }\n\t ", []byte{1}), []string{"a"}},
		{"leading zero dim avoids overflow", rawFile(entryObj("a", "F64", "[0,4294967296,4294967296]", 0, 0), nil), []string{"a"}},
	}
	manyFile, manyNames := manyEmpty(40)
	tests = append(tests, acceptCase{"many empty tensors keep header order", manyFile, manyNames})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tensors, _, err := Read(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, x := range tensors {
				names = append(names, x.Name)
			}
			if fmt.Sprint(names) != fmt.Sprint(tc.names) {
				t.Errorf("names = %q, want %q", names, tc.names)
			}
			checkRewrite(t, tensors, nil)
		})
	}
}

// manyEmpty returns a file whose header lists, for k = n-1 down to 0, a
// 1-byte tensor "dK" at [k,k+1] and then empty tensors "eKa", "eKb", "eKc"
// at [k,k], and the names in the order Read must return them:
// by offset, empty tensors first, ties in header order. The header is far
// from sorted, so an unstable sort would be caught.
func manyEmpty(n int) ([]byte, []string) {
	var parts, want []string
	data := make([]byte, n)
	for k := n - 1; k >= 0; k-- {
		parts = append(parts, entry(fmt.Sprintf("d%d", k), "U8", "[1]", k, k+1))
		for _, s := range []string{"a", "b", "c"} {
			parts = append(parts, entry(fmt.Sprintf("e%d%s", k, s), "U8", "[0]", k, k))
		}
	}
	for k := range n {
		want = append(want, fmt.Sprintf("e%da", k), fmt.Sprintf("e%db", k), fmt.Sprintf("e%dc", k), fmt.Sprintf("d%d", k))
	}
	return rawFile("{"+strings.Join(parts, ",")+"}", data), want
}

// entryObj is entry wrapped in braces.
func entryObj(name, dtype, shape string, begin, end int) string {
	return "{" + entry(name, dtype, shape, begin, end) + "}"
}

func TestReadAliases(t *testing.T) {
	b := mustWrite(t, []Tensor{U8("a", []int{2}, []byte{1, 2}), U8("b", []int{1}, []byte{3})}, nil)
	tensors, _, err := Read(b)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-3] = 42
	if tensors[0].Data[0] != 42 {
		t.Error("Data does not alias the input")
	}
	if cap(tensors[0].Data) != 2 {
		t.Errorf("cap(Data) = %d, want clipped to 2", cap(tensors[0].Data))
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("disk full")
	}
	w.n--
	return len(p), nil
}

func TestWriteErrors(t *testing.T) {
	ok := U8("ok", []int{1}, []byte{1})
	tests := []struct {
		name     string
		tensors  []Tensor
		metadata map[string]string
		want     string
	}{
		{"empty name", []Tensor{U8("", []int{1}, []byte{1})}, nil, "empty name"},
		{"duplicate name", []Tensor{ok, ok}, nil, `duplicate tensor name "ok"`},
		{"reserved name", []Tensor{U8("__metadata__", []int{1}, []byte{1})}, nil, "reserved"},
		{"invalid utf8 name", []Tensor{U8("a\xff", []int{1}, []byte{1})}, nil, "not valid UTF-8"},
		{"unknown dtype", []Tensor{{Name: "x", DType: "F16", Shape: []int{1}, Data: []byte{0, 0}}}, nil, `unknown dtype "F16"`},
		{"negative dim", []Tensor{{Name: "x", DType: "U8", Shape: []int{-1}}}, nil, "negative dimension"},
		{"short data", []Tensor{F32("x", []int{3}, []float32{1, 2})}, nil, "data is 8 bytes, shape [3] of F32 needs 12"},
		{"long data", []Tensor{I64("x", []int{}, []int64{1, 2})}, nil, "needs 8"},
		{"overflow", []Tensor{{Name: "x", DType: "U64", Shape: []int{1 << 62, 1 << 62}}}, nil, "overflows"},
		{"metadata key utf8", []Tensor{ok}, map[string]string{"\xff": "v"}, "metadata key"},
		{"metadata value utf8", []Tensor{ok}, map[string]string{"k": "\xff"}, "metadata value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Write(&buf, tc.tensors, tc.metadata)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes despite the error", buf.Len())
			}
		})
	}
	for n := range 3 {
		err := Write(&failWriter{n: n}, []Tensor{ok}, nil)
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("writer failing after %d writes: err = %v", n, err)
		}
	}
}

// sampleFile is a valid file with several dtypes, metadata, a scalar and an
// empty tensor, ending in a non-empty tensor.
func sampleFile(t testing.TB) []byte {
	return mustWrite(t, []Tensor{
		F32("w", []int{2, 2}, []float32{1, 2, 3, 4}),
		U8("empty", []int{0}, nil),
		I64("s", []int{}, []int64{-7}),
		U8("b", []int{3}, []byte{1, 2, 3}),
	}, map[string]string{"format": "pt"})
}

func TestReadTruncated(t *testing.T) {
	b := sampleFile(t)
	if _, _, err := Read(b); err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		if _, _, err := Read(b[:n:n]); err == nil {
			t.Errorf("truncated to %d of %d bytes: no error", n, len(b))
		}
	}
	// Extra bytes at the end are not covered by any tensor.
	if _, _, err := Read(append(b[:len(b):len(b)], 0)); err == nil {
		t.Error("file with a trailing byte: no error")
	}
}

func TestReadBitFlips(t *testing.T) {
	b := sampleFile(t)
	// Every single-bit flip.
	for i := range len(b) {
		for bit := range 8 {
			c := bytes.Clone(b)
			c[i] ^= 1 << bit
			if tensors, md, err := Read(c); err == nil {
				checkRewrite(t, tensors, md)
			}
		}
	}
	// Random multi-bit flips.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		c := bytes.Clone(b)
		for range 1 + rng.IntN(8) {
			c[rng.IntN(len(c))] ^= 1 << rng.IntN(8)
		}
		if tensors, md, err := Read(c); err == nil {
			checkRewrite(t, tensors, md)
		}
	}
}

// checkRewrite checks that tensors and metadata just read are accepted by
// the writer, read back identically, and that writing is then a fixed point.
func checkRewrite(t testing.TB, tensors []Tensor, md map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, tensors, md); err != nil {
		t.Fatalf("re-writing a file that read fine: %v", err)
	}
	out := buf.Bytes()
	tensors2, md2, err := Read(out)
	if err != nil {
		t.Fatalf("reading a re-written file: %v\n%q", err, out)
	}
	if d := equalTensors(tensors2, tensors); d != "" {
		t.Fatalf("tensors changed on re-write: %s", d)
	}
	if d := equalMetadata(md2, md); d != "" {
		t.Fatalf("metadata changed on re-write: %s", d)
	}
	var buf2 bytes.Buffer
	if err := Write(&buf2, tensors2, md2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf2.Bytes(), out) {
		t.Fatalf("second re-write differs:\n%q\n%q", out, buf2.Bytes())
	}
}

func FuzzRead(f *testing.F) {
	valid := sampleFile(f)
	f.Add(valid)
	f.Add(valid[:len(valid)-3])
	f.Add(rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]`, make([]byte, 8)))
	f.Add(rawFile(`{"__metadata__":{"k":"v"},"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}`, nil))
	f.Add(rawFile("{}", nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		tensors, md, err := Read(b)
		if err != nil {
			if tensors != nil || md != nil {
				t.Fatalf("results not nil on error %v", err)
			}
			return
		}
		checkRewrite(t, tensors, md)
	})
}

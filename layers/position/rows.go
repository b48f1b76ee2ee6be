package position

import (
	"fmt"
	"reflect"
	"unsafe"

	"gorgonia.org/tensor"
)

// Float is the element type of a kernel bias: float32 for models, float64
// for gradient checks.
type Float interface{ ~float32 | ~float64 }

// float is Float, the short name the bias code uses.
type float = Float

// elems returns the elements of t, whose dtype must be E, read in place.
func elems[E any](t *tensor.Dense) []E {
	if dt := t.Dtype(); dt.Type != reflect.TypeFor[E]() {
		panic(fmt.Sprintf("position: a tensor of %v read as %v", dt, reflect.TypeFor[E]()))
	}
	raw := t.Header.Raw
	var e E
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(raw))), uintptr(len(raw))/unsafe.Sizeof(e))
}

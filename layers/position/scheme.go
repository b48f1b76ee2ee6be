package position

import (
	"math/rand/v2"

	"gorgonia.org/tensor"
)

// Scheme is a position scheme as a model uses it: everything the
// model, training, evaluation and the commands ask of one. The built-in
// schemes (the list in registry.go) are registered
// by name (see Lookup); another package adds one with Register.
//
// A scheme enters the model in any of three ways, each a question below: a
// table added to the token embeddings (EmbeddingTable), a rotation of the
// queries and keys (Rotary), or a bias inside the attention kernel
// (AttentionBias). A scheme that answers no to all three is the causal mask
// alone.
type Scheme interface {
	// Name is the scheme's registry name, the value of a model config's
	// pos and of the commands' --pos.
	Name() string
	// Validate reports why the scheme cannot serve a model of this shape,
	// or nil.
	Validate(shape ModelShape) error

	// SharedParams are the scheme's trainable tensors that every layer
	// shares, in the model's weights right after the token embedding,
	// under their Name.
	SharedParams(shape ModelShape) []ParamSpec
	// LayerParams are the trainable tensors each layer has of its own, in
	// the model's weights after the layer's MLP, under the name
	// "layers.<l>.<Name>".
	LayerParams(shape ModelShape) []ParamSpec
	// Buffer is the scheme's constant (never trained) tensor, such as the
	// ALiBi slopes, with its name: the checkpoint stores it as
	// "buffers.<name>". A nil data means no buffer.
	Buffer(shape ModelShape) (name string, data []float32)

	// EmbeddingTable returns the function that makes the (length, dModel)
	// table added to the token embeddings (row p for position p), or nil
	// when the scheme adds none. Row p must not depend on length.
	EmbeddingTable() func(length, dModel int) *tensor.Dense
	// Rotary reports whether attention rotates queries and keys by their
	// positions (see Rope).
	Rotary() bool
	// AttentionBias returns the bias the attention kernel adds to the
	// scores and the name of the tensor it reads as its parameters: the
	// Buffer's name, a SharedParams name or a LayerParams name (the layer's
	// own), which must therefore differ. A nil BiasScheme means no bias.
	AttentionBias(shape ModelShape) (bias BiasScheme, params string)
	// EvalBytes is the memory the scheme's own buffers (tables, not the
	// outputs of ops, which model.EvalGraphBytes counts from the graph)
	// add to an evaluation graph of batch sequences of length tokens.
	EvalBytes(shape ModelShape, batch, length int) int64
}

// ModelShape is what a position scheme knows of the model it serves.
type ModelShape struct {
	DModel   int // model width
	Layers   int // number of layers
	Heads    int // attention heads per layer
	TrainLen int // training length
}

// DHead is the width of one attention head.
func (s ModelShape) DHead() int { return s.DModel / s.Heads }

// ParamSpec is one trainable tensor of a position scheme.
type ParamSpec struct {
	// Name is the tensor's name in the weights and checkpoints (for a
	// layer's tensor, the part after "layers.<l>.").
	Name string
	// Shape is the tensor's shape.
	Shape []int
	// Init returns the initial values (Shape's size of them), drawn in
	// order from rng, the generator every weight of the model is drawn from.
	Init func(rng *rand.Rand) []float32
	// Decay reports whether the optimizer applies weight decay to the
	// tensor (when it has two dimensions or more, as the model's matrices).
	Decay bool
	// Project, when not nil, moves the values back into the tensor's
	// domain after every optimizer step (see Projector).
	Project func(params []float32)
}

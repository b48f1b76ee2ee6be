package data

// VocabSize is the number of ids of the byte tokenizer ([ByteTokenizer]):
// one per byte value, the id of a byte being its value.
const VocabSize = 256

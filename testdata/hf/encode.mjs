// Encodes a text with Hugging Face's JavaScript tokenizers (tokenizers.js),
// an implementation independent of data/bpe, and prints
// {"ids": [...], "decoded_equal": true|false} on stdout: the ids of
// encode(text, {add_special_tokens: false}) and whether decoding them gives
// the text back. The Go test TestHuggingFaceJS (data/bpe) runs it.
//
//   node testdata/hf/encode.mjs TOKENIZER_JSON TEXT_FILE
import fs from "node:fs";
import { Tokenizer } from "@huggingface/tokenizers";

const [tokenizerPath, textPath] = process.argv.slice(2);
if (!tokenizerPath || !textPath) {
  console.error("usage: node encode.mjs TOKENIZER_JSON TEXT_FILE");
  process.exit(2);
}
const tokenizer = new Tokenizer(JSON.parse(fs.readFileSync(tokenizerPath, "utf8")), {});
const text = fs.readFileSync(textPath, "utf8");
const ids = tokenizer.encode(text, { add_special_tokens: false }).ids;
const decoded = ids.length === 0 ? "" : tokenizer.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
process.stdout.write(JSON.stringify({ ids, decoded_equal: decoded === text }));

// Scores token sequences and tokenizes texts with llama.cpp, through
// node-llama-cpp, for the GGUF export's tests (go test ./model/gguf).
// Usage:
//
//	node score.mjs REQUEST.json
//
// REQUEST is {"models": [{"path": FILE.gguf, "context": N,
// "windows": [[id, ...], ...], "texts": [path, ...]}, ...]}. Each window is
// evaluated from an empty context of N tokens (F32 key/value cache, flash
// attention off), position by position; its result is the natural log of
// the probability llama.cpp gives each next token of the window. Each text
// file is tokenized with the model file's vocabulary, without special
// tokens. Standard output gets {"results": [{"logprobs": [[...], ...],
// "tokens": [[...], ...]}, ...]}, one result per model, in order.
import fs from "node:fs";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

const req = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
const results = [];
for (const m of req.models) {
  const model = await llama.loadModel({ modelPath: m.path });
  const res = { logprobs: [], tokens: [] };
  for (const window of m.windows ?? []) {
    const context = await model.createContext({
      contextSize: m.context,
      batchSize: m.context,
      sequences: 1,
      flashAttention: false,
      experimentalKvCacheKeyType: "F32",
      experimentalKvCacheValueType: "F32",
    });
    const evaluated = await context.getSequence().controlledEvaluate(
      window.slice(0, -1).map((t) => [t, { generateNext: { probabilities: true } }]));
    res.logprobs.push(evaluated.map((r, i) => {
      const p = r?.next?.probabilities?.get(window[i + 1]);
      return p === undefined ? null : Math.log(p);
    }));
    await context.dispose();
  }
  for (const path of m.texts ?? []) {
    res.tokens.push(Array.from(model.tokenize(fs.readFileSync(path, "utf8"), false)));
  }
  await model.dispose();
  results.push(res);
}
process.stdout.write(JSON.stringify({ results }));

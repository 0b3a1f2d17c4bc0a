// Optimises WASM files for size (what `wasm-opt -Oz --strip-debug` does) in
// one Node process. The split build has hundreds of small chunks; starting
// wasm-opt once per chunk costs ~0.8 s each, this costs a few ms each.
//
//   node tools/wasm-opt-all.mjs FILE.wasm...   (each file is rewritten in place)
import binaryen from 'binaryen';
import { readFileSync, writeFileSync } from 'node:fs';

const F = binaryen.Features;
// The features Rust's wasm32-unknown-unknown target emits (as the command
// line's --enable-bulk-memory --enable-nontrapping-float-to-int
// --enable-sign-ext --enable-mutable-globals).
const features = F.MVP | F.BulkMemory | (F.BulkMemoryOpt ?? 0) | F.NontrappingFPToInt | F.SignExt | F.MutableGlobals;

binaryen.setOptimizeLevel(2);
binaryen.setShrinkLevel(2);
binaryen.setDebugInfo(false);

let before = 0, after = 0;
for (const file of process.argv.slice(2)) {
  const input = readFileSync(file);
  const module = binaryen.readBinary(input);
  module.setFeatures(features);
  module.optimize();
  const output = module.emitBinary();
  module.dispose();
  writeFileSync(file, output);
  before += input.length;
  after += output.length;
}
console.log(`wasm-opt-all: ${process.argv.length - 2} files, ${before} → ${after} bytes`);

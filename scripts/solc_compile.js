// Compile a solc standard-JSON input file with the npm `solc` package (solcjs) and write the
// standard-JSON output to a file. A node script rather than the solcjs CLI: the CLI truncates
// --standard-json output at 64 KiB when stdout is a pipe.
// Usage: node scripts/solc_compile.js <input.json> <output.json>
"use strict";
const fs = require("fs");
const path = require("path");
const solc = require("solc");

const [inputPath, outputPath] = process.argv.slice(2);
const root = path.resolve(__dirname, "..");
const searchPaths = [root, path.join(root, "node_modules")];

function findImports(importPath) {
  for (const base of searchPaths) {
    const candidate = path.join(base, importPath);
    if (candidate.startsWith(base) && fs.existsSync(candidate)) {
      return { contents: fs.readFileSync(candidate, "utf8") };
    }
  }
  return { error: `File not found: ${importPath}` };
}

const input = fs.readFileSync(inputPath, "utf8");
const output = solc.compile(input, { import: findImports });
fs.writeFileSync(outputPath, output);
process.stdout.write(`solc ${solc.version()}\n`);

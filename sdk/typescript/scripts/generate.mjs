// The SDK's types, generated from the service's OpenAPI document with openapi-typescript:
//   node scripts/generate.mjs <document.json> <out dir>
// writes <out dir>/schema.ts (paths, components, operations) and <out dir>/codes.ts (every error `code`
// the document lists, the type of AgentLedgerError.code).
// `make sdk-types` runs it on the document the service serves (python -m scripts.openapi_document), and
// the test suite fails when the checked-in src/generated/schema.ts differs from what it writes.
//
// Two generator options, both about what TypeScript can say, not about the document:
// - defaultNonNullable false: a property with a `default` that is not `required` is optional (a request
//   may leave it out; JSON Schema's `default` is an annotation, not a promise that the field is there);
// - an array whose items are the very schema it sits in (the free-JSON types AnyJson, JsonValue,
//   CanonicalJson: an array of JSON) is typed unknown[]: TypeScript cannot declare a type that recurses
//   through an indexed access and an array alone (TS2502 under strict tsc, openapi-typescript #1603), and
//   the document cannot say it otherwise without letting validators accept what the service refuses.
import { readFileSync, writeFileSync } from "node:fs";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";

const [input, outDir] = process.argv.slice(2);
if (!input || !outDir) {
  console.error("usage: node scripts/generate.mjs <document.json> <out dir>");
  process.exit(2);
}
const UNKNOWN_ARRAY = ts.factory.createArrayTypeNode(ts.factory.createKeywordTypeNode(ts.SyntaxKind.UnknownKeyword));

const document = JSON.parse(readFileSync(input, "utf8"));
const ast = await openapiTS(document, {
  defaultNonNullable: false,
  transform(schema, options) {
    const ref = schema.type === "array" && schema.items && typeof schema.items === "object" ? schema.items.$ref : undefined;
    if (typeof ref === "string" && typeof options.path === "string" && options.path.startsWith(`${ref}/`)) {
      return UNKNOWN_ARRAY;
    }
    return undefined;
  },
});
const header =
  "// Generated from the agentledger OpenAPI document by scripts/generate.mjs (openapi-typescript): do not edit.\n" +
  "// Regenerate with `make sdk-types` at the repository's root.\n\n";
writeFileSync(`${outDir}/schema.ts`, header + astToString(ast));

// Every error response says "`code` is one of: a, b, c" (api/openapi.py): the codes, sorted.
const codes = new Set();
for (const item of Object.values(document.paths)) {
  for (const op of Object.values(item)) {
    for (const response of Object.values(op.responses ?? {})) {
      const listed = /`code` is one of: (.*)$/.exec(response.description ?? "");
      for (const code of listed?.[1]?.split(", ") ?? []) codes.add(code);
    }
  }
}
const union = [...codes].sort().map((c) => `  | ${JSON.stringify(c)}`).join("\n");
writeFileSync(
  `${outDir}/codes.ts`,
  header +
    "/** Every `code` an error of the API may carry, as the document lists them. */\n" +
    `export type ErrorCode =\n${union};\n\n` +
    `export const ERROR_CODES: readonly ErrorCode[] = [\n${[...codes].sort().map((c) => `  ${JSON.stringify(c)},`).join("\n")}\n];\n`,
);

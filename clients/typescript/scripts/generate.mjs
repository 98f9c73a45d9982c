// The protocol's event types, generated from the schema: `npm run generate` writes
// src/events.generated.ts; test/generated.test.mjs fails when that file and the schema differ.
//
// The schema comes from signoff's pydantic models (`signoff schema`), which give every
// property a `title` (its field name). json-schema-to-typescript would make each titled
// property a named type of its own (`Type`, `Type1`, … and an `Error` that hides the global
// one), so the properties' titles are dropped first; each definition keeps its own title,
// which names its interface.
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

import { compile } from "json-schema-to-typescript";

export const SCHEMA = fileURLToPath(new URL("../../../protocol/loop-event.schema.json", import.meta.url));
export const GENERATED = fileURLToPath(new URL("../src/events.generated.ts", import.meta.url));

const BANNER = `/**
 * The protocol's LoopEvent types, generated from protocol/loop-event.schema.json by
 * \`npm run generate\` (json-schema-to-typescript). Do not edit: change the schema (it comes
 * from signoff/events.py, \`signoff schema\`) and generate again; a test fails when they differ.
 */`;

function untitled(schema) {
  if (Array.isArray(schema)) return schema.map(untitled);
  if (schema === null || typeof schema !== "object") return schema;
  const { title: _title, ...rest } = schema;
  return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, untitled(value)]));
}

function withoutPropertyTitles(schema) {
  const defs = Object.fromEntries(
    Object.entries(schema.$defs ?? {}).map(([name, def]) => [
      name,
      { ...def, properties: untitled(def.properties ?? {}) },
    ]),
  );
  return { ...schema, $defs: defs };
}

/** The TypeScript the schema stands for, as src/events.generated.ts holds it. */
export async function generate() {
  const schema = JSON.parse(await readFile(SCHEMA, "utf8"));
  return compile(withoutPropertyTitles(schema), "LoopEvent", {
    bannerComment: BANNER,
    // additionalProperties: false everywhere in the schema; where it is true (a call's
    // arguments) the schema says so and the type is an index signature.
    additionalProperties: false,
    strictIndexSignatures: false,
    format: true,
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(GENERATED, await generate());
  console.log(`wrote ${GENERATED}`);
}

/**
 * The protocol's LoopEvent types, generated from protocol/loop-event.schema.json by
 * `npm run generate` (json-schema-to-typescript). Do not edit: change the schema (it comes
 * from signoff/events.py, `signoff schema`) and generate again; a test fails when they differ.
 */
export {};

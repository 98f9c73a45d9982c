// The built client, copied to where the local stack serves it from (the playground's static
// files, package data of signoff_dev): `signoff dev` serves it as /signoff-client.js, so a
// fresh clone's playground works without Node.js. test/build.test.mjs fails when the copy
// and dist/client.js differ.
import { copyFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

export const BUILT = fileURLToPath(new URL("../dist/client.js", import.meta.url));
export const SERVED = fileURLToPath(
  new URL("../../../dev/signoff_dev/local/static/signoff-client.js", import.meta.url),
);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await copyFile(BUILT, SERVED);
  console.log(`copied ${BUILT} to ${SERVED}`);
}

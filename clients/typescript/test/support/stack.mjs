// The local stack for a test file: `python -m tests.support.node_stack` (the conformance
// test's agents on `signoff dev`'s stack, free ports, an API key of the default tenant),
// started with the repository's virtualenv — SIGNOFF_PYTHON, which `make test` sets, or
// .venv/bin/python.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const STARTUP_MS = 60_000;

function python() {
  const chosen = process.env.SIGNOFF_PYTHON || `${ROOT}.venv/bin/python`;
  if (!existsSync(chosen)) {
    throw new Error(
      `no Python for the local stack at ${chosen}: run \`make install\` first, or set SIGNOFF_PYTHON`,
    );
  }
  return chosen;
}

/**
 * A running stack: `{ url, apiKey, stop() }`. `stream: false` serves no SSE route (as a
 * deployed HTTP API without the stream function).
 */
export async function startStack({ stream = true } = {}) {
  const args = ["-m", "tests.support.node_stack", ...(stream ? [] : ["--no-stream"])];
  const child = spawn(python(), args, { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (text) => {
    stderr = (stderr + text).slice(-8000);
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const first = new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => resolve(JSON.parse(line)));
    exited.then(({ code, signal }) =>
      reject(new Error(`the local stack exited (${code ?? signal}) before it started:\n${stderr}`)),
    );
    setTimeout(() => reject(new Error(`the local stack did not start in ${STARTUP_MS} ms:\n${stderr}`)), STARTUP_MS).unref();
  });
  let started;
  try {
    started = await first;
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return {
    url: started.url,
    apiKey: started.apiKey,
    async stop() {
      child.stdin.end(); // the launcher stops when its standard input closes
      const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

// Fetches that stand between the client and the stack, as the Python conformance test's
// httpx transports do (tests/e2e/transport/test_transport_conformance.py: Cutting, NoStream).

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function matches(url, init, suffix, method) {
  return (init?.method ?? "GET") === method && new URL(url).pathname.endsWith(suffix);
}

/**
 * Forwards to the stack; cuts the first request whose path ends with `suffix`. `frames` set:
 * the answer's body is cut after that many SSE frames (the chunk that holds the cut is cut
 * mid-frame when it holds more). `frames` null: the request reaches the stack, which answers,
 * and the answer is lost. `calls` lists every request as "METHOD path".
 */
export function cutting(suffix, { frames = null, method = "POST" } = {}) {
  const state = { cuts: 0, calls: [] };
  state.fetch = async (url, init) => {
    state.calls.push(`${init?.method ?? "GET"} ${new URL(url).pathname}`);
    const response = await fetch(url, init);
    if (state.cuts || !matches(url, init, suffix, method)) return response;
    state.cuts += 1;
    if (frames === null) {
      await response.arrayBuffer(); // the server did its work; the client never hears of it
      throw new TypeError("fetch failed (connection reset by the test)");
    }
    const reader = response.body.getReader();
    let seen = 0;
    const body = new ReadableStream({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) {
          controller.close();
          return;
        }
        seen += decoder.decode(value).split("\n\n").length - 1;
        if (seen < frames) {
          controller.enqueue(value);
          return;
        }
        const cut = seen > frames ? Math.floor(value.length / 2) : value.length;
        controller.enqueue(value.slice(0, cut));
        await reader.cancel();
        controller.error(new TypeError("terminated (connection reset mid-turn by the test)"));
      },
      cancel: () => reader.cancel(),
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return state;
}

/** A stack without the stream route, as a deployed HTTP API answers it. */
export function noStream() {
  const state = { refused: 0 };
  state.fetch = async (url, init) => {
    const path = new URL(url).pathname;
    if (path.endsWith("/messages/stream")) {
      state.refused += 1;
      const body = JSON.stringify({ error: "not_found", detail: `no route POST ${path}` });
      return new Response(encoder.encode(body), {
        status: 404,
        headers: { "content-type": "application/json" },
      });
    }
    return fetch(url, init);
  };
  return state;
}

/** Knowing when an HTTP answer has gone out: the runner's faces and the gateway's MCP endpoints. */

/**
 * `response`, with `done` run once its body has been sent (or given up by the client); at once when
 * it has no stream (with `everyBody`, only when it has no body at all). A tracked body is passed
 * through as it is read.
 */
export function whenSent(
  response: Response,
  done: () => void,
  options: { everyBody?: boolean } = {},
): Response {
  const body = response.body;
  const streams = response.headers.get("content-type")?.includes("text/event-stream") === true;
  if (body === null || !(streams || options.everyBody)) {
    done();
    return response;
  }
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    done();
  };
  const reader = body.getReader();
  const tracked = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done: ended, value } = await reader.read();
          if (ended) {
            finish();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          finish();
          controller.error(error);
        }
      },
      cancel(reason) {
        finish();
        return reader.cancel(reason).catch(() => undefined);
      },
      // No read ahead: the end is read (and `done` run) only once the last chunk has been taken.
    },
    { highWaterMark: 0 },
  );
  return new Response(tracked, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

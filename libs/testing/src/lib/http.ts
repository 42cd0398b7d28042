export interface HttpAnswer<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or null when the body is empty or not JSON. */
  body: T;
  text: string;
}

export interface HttpRequestOptions {
  /** Sent as JSON (with content-type application/json unless one is given). */
  body?: unknown;
  /** Sent as is. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

/** One HTTP request to an app under test, answered with status, headers, text and parsed JSON. */
export async function requestJson<T = Record<string, unknown>>(baseUrl: string, method: string, path: string, options: HttpRequestOptions = {}): Promise<HttpAnswer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Buffer | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  // A copy into a plain Uint8Array: a Buffer is a BodyInit to Node's fetch types but not to the DOM's, which the browser suites compile against.
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body: typeof body === 'string' || body === undefined ? body : Uint8Array.from(body) });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

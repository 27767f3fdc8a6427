// Calls of eddy's REST API (same origin; the token, when the server needs
// one, travels in its HttpOnly cookie).

// ApiError is an answer with an error code, carrying the server's message.
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function call(method, path, body) {
  const init = { method, credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  let data = null;
  const text = await resp.text();
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!resp.ok) {
    const msg = data && typeof data.error === 'string' ? data.error : `${method} ${path}: HTTP ${resp.status} ${text.slice(0, 200)}`;
    throw new ApiError(resp.status, msg);
  }
  return data;
}

// get reads a JSON resource.
export const get = (path) => call('GET', path);

// post sends a JSON body and returns the JSON answer.
export const post = (path, body = {}) => call('POST', path, body);

// jobPath is the API path of a job, with a sub-resource.
export function jobPath(id, ...rest) {
  return ['/v1/jobs', encodeURIComponent(id), ...rest.map((r) => encodeURIComponent(String(r)))].join('/');
}

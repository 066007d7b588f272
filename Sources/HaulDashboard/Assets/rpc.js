// A JSON-RPC 2.0 client for aria2's protocol (and haul daemon's): one WebSocket to /jsonrpc on
// the page's own origin, reconnected with backoff; while it is down, calls go as HTTP POSTs to
// the same path (the caller polls at most once a second). Notifications (aria2.onDownload*)
// arrive only over the WebSocket.

const TIMEOUT_MS = 10000;
const BACKOFF_MS = [1000, 2000, 4000, 8000, 15000, 30000];

/** An error answered by the server: `code` and `message` as sent ("Unauthorized", ...). */
export class RpcError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }

  /** Whether the server refused the secret (aria2 and haul answer "Unauthorized"). */
  get unauthorized() {
    return this.message === 'Unauthorized';
  }
}

/** The endpoints on the page's own origin: /jsonrpc over ws: (wss: under https:) and HTTP. */
export function endpoints(location) {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return { socket: `${scheme}://${location.host}/jsonrpc`, http: `${location.origin}/jsonrpc` };
}

export class RpcClient {
  /**
   * @param {{socket: string, http: string}} urls
   * @param {(method: string, params: any[]) => void} onNotification
   * @param {(state: 'connecting'|'websocket'|'http'|'offline') => void} onState
   */
  constructor(urls, { onNotification = () => {}, onState = () => {} } = {}) {
    this.urls = urls;
    this.onNotification = onNotification;
    this.onState = onState;
    this.token = '';
    this.nextId = 1;
    this.pending = new Map();
    this.socket = null;
    this.attempt = 0;
    this.reconnectTimer = 0;
    this.state = 'connecting';
  }

  /** Opens the WebSocket; resolves once it is open or has failed (calls then go over HTTP). */
  connect() {
    return new Promise((resolve) => this.open(resolve));
  }

  /** Calls `method` with the secret as its first parameter (system.* methods take none). */
  call(method, params = []) {
    const withToken = method.startsWith('system.') ? params : [`token:${this.token}`, ...params];
    return this.send(method, withToken);
  }

  /**
   * Calls several methods in one request (system.multicall); resolves to one entry per call:
   * {result} or {error: RpcError}.
   */
  async multicall(calls) {
    const methods = calls.map(([methodName, params = []]) => ({
      methodName,
      params: [`token:${this.token}`, ...params],
    }));
    const answers = await this.send('system.multicall', [methods]);
    return answers.map((answer) => (Array.isArray(answer)
      ? { result: answer[0] }
      : { error: new RpcError(answer.code, answer.message) }));
  }

  send(method, params) {
    const id = String(this.nextId++);
    const body = JSON.stringify({ jsonrpc: '2.0', id, method, params });
    if (this.socket && this.socket.readyState === WebSocket.OPEN) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => this.settle(id, null, new Error('no answer in time')), TIMEOUT_MS);
        this.pending.set(id, { resolve, reject, timer });
        this.socket.send(body);
      });
    }
    return this.post(body);
  }

  async post(body) {
    let response;
    try {
      response = await fetch(this.urls.http, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
        cache: 'no-store',
        credentials: 'omit',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      this.setState('offline');
      throw new Error('the daemon cannot be reached');
    }
    const reply = await response.json().catch(() => null);
    if (!reply) throw new Error(`the daemon answered HTTP ${response.status}`);
    if (this.state !== 'websocket') this.setState('http');
    if (reply.error) throw new RpcError(reply.error.code, reply.error.message);
    return reply.result;
  }

  open(ready) {
    clearTimeout(this.reconnectTimer);
    if (this.attempt === 0) this.setState('connecting');
    let socket;
    try {
      socket = new WebSocket(this.urls.socket);
    } catch {
      this.scheduleReconnect();
      ready();
      return;
    }
    this.socket = socket;
    let opened = false;
    socket.addEventListener('open', () => {
      opened = true;
      this.attempt = 0;
      this.setState('websocket');
      ready();
    });
    socket.addEventListener('message', (event) => this.receive(event.data));
    socket.addEventListener('close', () => {
      if (this.socket !== socket) return;
      this.socket = null;
      for (const id of [...this.pending.keys()]) this.settle(id, null, new Error('the connection closed'));
      this.setState('http');
      this.scheduleReconnect();
      if (!opened) ready();
    });
  }

  scheduleReconnect() {
    const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt += 1;
    this.reconnectTimer = setTimeout(() => this.open(() => {}), delay);
  }

  receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    if (message.id === undefined || message.id === null) {
      if (typeof message.method === 'string') this.onNotification(message.method, message.params || []);
      return;
    }
    const error = message.error ? new RpcError(message.error.code, message.error.message) : null;
    this.settle(String(message.id), message.result, error);
  }

  settle(id, result, error) {
    const call = this.pending.get(id);
    if (!call) return;
    this.pending.delete(id);
    clearTimeout(call.timer);
    if (error) call.reject(error);
    else call.resolve(result);
  }

  setState(state) {
    if (state === this.state) return;
    this.state = state;
    this.onState(state);
  }
}

import { connect, type Socket } from 'node:net';

export interface SlowClients {
  /** Connections the server has closed so far. */
  closedByServer(): number;
  stop(): void;
}

/**
 * Opens `count` connections that never finish a request: `headers` send headers a line at a time
 * (slowloris), `body` post to a wrong path and send one body byte every `everyMs` (the attack),
 * `mixed` half and half. Resolves once every connection attempt has connected or failed.
 */
export async function openSlowClients(port: number, count: number, kind: 'headers' | 'body' | 'mixed' = 'mixed', everyMs = 5000): Promise<SlowClients> {
  const isHeaders = (i: number) => kind === 'headers' || (kind === 'mixed' && i % 2 === 0);
  const sockets: Socket[] = [];
  let closed = 0;
  let stopping = false;
  const settled: Array<Promise<void>> = [];
  for (let i = 0; i < count; i++) {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    socket.resume(); // read (and drop) answers, so the server's close is seen
    socket.on('error', () => {});
    socket.on('close', () => {
      if (!stopping) closed++;
    });
    settled.push(
      new Promise((resolve) => {
        socket.once('connect', () => resolve());
        socket.once('close', () => resolve());
      }),
    );
    if (isHeaders(i)) socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
    else socket.write(`POST /wrong-${i} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{`);
    sockets.push(socket);
    // Pace the connects a little: a burst of 1,100 SYNs overflows the listen backlog on any server.
    if (i % 100 === 99) await new Promise((r) => setTimeout(r, 20));
  }
  await Promise.all(settled);
  const drip = setInterval(() => {
    for (const [i, s] of sockets.entries()) if (!s.destroyed) s.write(isHeaders(i) ? 'X-Slow: 1\r\n' : ' ');
  }, everyMs);
  return {
    closedByServer: () => closed,
    stop: () => {
      stopping = true;
      clearInterval(drip);
      for (const s of sockets) s.destroy();
    },
  };
}

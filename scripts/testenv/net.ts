// Loopback-only networking helpers for the local stack.
import { readFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';

/** A currently free TCP port on 127.0.0.1 (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A port for a server that listens on every address (vtcombo's `--grpc-port` and `--port` bind
 * `:P`): taken at random BELOW the kernel's ephemeral range, where no outgoing connection of any
 * process can be handed it between this check and the server's bind (a port freePort() returns
 * comes from that range, and once was: `bind: address already in use`), and free on 0.0.0.0 now.
 */
export async function freeServerPort(taken: readonly number[] = []): Promise<number> {
  const ephemeralFrom = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  const [low, high] = [Math.max(1024, ephemeralFrom - 12_000), ephemeralFrom - 1];
  for (let tries = 0; tries < 50; tries++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (!taken.includes(port) && (await bindable(port))) return port;
  }
  throw new Error(`no free port in ${low}..${high} after 50 tries`);
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '0.0.0.0', () => srv.close(() => resolve(true)));
  });
}

/** True if something accepts TCP connections on host:port. */
export function canConnect(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ port, host });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

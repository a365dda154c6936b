// A TCP forwarder on loopback that can be switched off (open connections cut, new ones refused)
// and on again: a database that goes away and comes back, without touching the database.
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpSwitch {
  port: number;
  up(): void;
  down(): void;
  close(): Promise<void>;
}

export async function startTcpSwitch(targetHost: string, targetPort: number): Promise<TcpSwitch> {
  let on = true;
  const open = new Set<Socket>();
  const track = (s: Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => s.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (!on) return void client.destroy();
    const upstream = connect(targetPort, targetHost);
    track(upstream);
    client.pipe(upstream).on('close', () => client.destroy());
    upstream.pipe(client).on('close', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    up: () => void (on = true),
    down: () => {
      on = false;
      for (const s of open) s.destroy();
    },
    close: () => {
      on = false;
      for (const s of open) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

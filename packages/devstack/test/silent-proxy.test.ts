import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SilentProxy, startSilentProxy } from '../src/silent-proxy.js';

/** An echo server behind the proxy: what a client sends comes back through it. */
let echo: ReturnType<typeof createServer>;
let proxy: SilentProxy;

beforeAll(async () => {
  echo = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  proxy = await startSilentProxy({ host: '127.0.0.1', port: (echo.address() as { port: number }).port });
});

afterAll(async () => {
  await proxy.close();
  await new Promise((resolve) => echo.close(resolve));
});

async function client(): Promise<{ socket: Socket; received: () => string }> {
  const socket = connect(proxy.port, '127.0.0.1');
  await once(socket, 'connect');
  let text = '';
  socket.on('data', (b) => {
    text += b.toString();
  });
  return { socket, received: () => text };
}

describe('the silent proxy', () => {
  it('holds every connection, open and new, without closing any, and delivers what it held on release', async () => {
    const before = await client();
    before.socket.write('a');
    await expect.poll(before.received).toBe('a');

    proxy.hold();
    before.socket.write('b');
    const during = await client(); // a new connection is accepted, and silent too
    during.socket.write('c');
    await sleep(200);
    expect([before.received(), during.received()]).toEqual(['a', '']);
    expect([before.socket.destroyed, during.socket.destroyed]).toEqual([false, false]);

    proxy.release();
    await expect.poll(() => [before.received(), during.received()]).toEqual(['ab', 'c']);
    before.socket.write('d'); // forwarded again
    await expect.poll(before.received).toBe('abd');
    for (const c of [before, during]) c.socket.destroy();
  });

  it('freezes the connections open then for good, and forwards the ones made afterwards', async () => {
    const frozen = await client();
    proxy.freeze();
    frozen.socket.write('x');
    const later = await client();
    later.socket.write('y');
    await expect.poll(later.received).toBe('y');
    expect(frozen.received()).toBe('');
    for (const c of [frozen, later]) c.socket.destroy();
  });
});

// A TCP proxy a test can cut: the server under test talks to PostgreSQL
// through it, and `cut()` closes every connection and stops listening, so the
// database is unreachable (connections refused) as in a real outage;
// `restore()` listens again on the same port.
import type { Socket, TCPSocketListener } from "bun";

/** One proxied connection: both sockets and what each could not take yet. */
interface Pair {
  client: Socket<Pair>;
  upstream?: Socket<Pair>;
  toUpstream: Uint8Array[];
  toClient: Uint8Array[];
}

/** Writes `bytes` after anything queued before; what the socket cannot take now waits for its drain. */
function send(socket: Socket<Pair> | undefined, queue: Uint8Array[], bytes?: Uint8Array): void {
  if (bytes) queue.push(bytes.slice());
  if (!socket) return;
  while (queue.length > 0) {
    const written = socket.write(queue[0]);
    if (written < queue[0].length) {
      queue[0] = queue[0].slice(Math.max(0, written));
      return;
    }
    queue.shift();
  }
}

export class TcpProxy {
  private listener: TCPSocketListener<Pair> | null = null;
  private readonly open = new Set<Socket<Pair>>();
  port = 0;

  private constructor(private readonly targetPort: number) {}

  static start(targetPort: number): TcpProxy {
    const proxy = new TcpProxy(targetPort);
    proxy.listen(0);
    return proxy;
  }

  private listen(port: number): void {
    const { open, targetPort } = this;
    this.listener = Bun.listen<Pair>({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(client) {
          const pair: Pair = { client, toUpstream: [], toClient: [] };
          client.data = pair;
          open.add(client);
          Bun.connect<Pair>({
            hostname: "127.0.0.1",
            port: targetPort,
            socket: {
              open(upstream) {
                upstream.data = pair;
                pair.upstream = upstream;
                open.add(upstream);
                send(upstream, pair.toUpstream);
              },
              data: (_upstream, bytes) => send(pair.client, pair.toClient, bytes),
              drain: (upstream) => send(upstream, pair.toUpstream),
              close(upstream) {
                open.delete(upstream);
                pair.client.end();
              },
              error(upstream) {
                upstream.end();
              },
            },
          }).catch(() => client.end());
        },
        data: (client, bytes) => send(client.data.upstream, client.data.toUpstream, bytes),
        drain: (client) => send(client, client.data.toClient),
        close(client) {
          open.delete(client);
          client.data.upstream?.end();
        },
        error(client) {
          client.end();
        },
      },
    });
    this.port = this.listener.port;
  }

  /** Every connection closed, and new ones refused. */
  cut(): void {
    this.listener?.stop(true);
    this.listener = null;
    for (const socket of this.open) socket.terminate();
    this.open.clear();
  }

  /** Listening again on the same port. */
  restore(): void {
    if (!this.listener) this.listen(this.port);
  }
}

import net from 'node:net'

/**
 * A TCP proxy on 127.0.0.1 between the app and PostgreSQL, which a test can break: the shared
 * PostgreSQL server must never be stopped (other test files use it at the same time), so "the
 * database is down" happens here.
 *
 * - `cut()`: a crash or restart. Open connections are reset; new ones are reset as they arrive.
 * - `silence()`: a network partition. Nothing is forwarded any more and nothing is closed: the
 *   app's sockets stay open and hear nothing, new connections are accepted and never answered.
 * - `restore()`: the database is back. Connections from before are gone (reset), new ones work.
 */
export class TcpProxy {
  readonly #server: net.Server
  readonly #sockets = new Set<net.Socket>()
  #mode: 'open' | 'cut' | 'silent' = 'open'

  private constructor (server: net.Server) { this.#server = server }

  static async start (target: { host: string, port: number }): Promise<TcpProxy> {
    const server = net.createServer()
    const proxy = new TcpProxy(server)
    server.on('connection', (client) => { proxy.#accept(client, target) })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return proxy
  }

  get port (): number { return (this.#server.address() as net.AddressInfo).port }

  #accept (client: net.Socket, target: { host: string, port: number }): void {
    if (this.#mode === 'cut') { client.resetAndDestroy(); return }
    if (this.#mode === 'silent') {
      // Held, never answered (nothing reaches the server either).
      this.#sockets.add(client)
      client.on('error', () => {})
      client.on('close', () => { this.#sockets.delete(client) })
      return
    }
    const upstream = net.connect(target.port, target.host)
    for (const [from, to] of [[client, upstream], [upstream, client]]) {
      this.#sockets.add(from)
      from.on('data', (chunk) => { if (this.#mode === 'open') to.write(chunk) })
      from.on('error', () => {})
      from.on('close', () => { this.#sockets.delete(from); if (this.#mode !== 'silent') to.destroy() })
    }
  }

  #resetAll (): void {
    for (const socket of this.#sockets) socket.resetAndDestroy()
    this.#sockets.clear()
  }

  cut (): void {
    this.#mode = 'cut'
    this.#resetAll()
  }

  silence (): void {
    this.#mode = 'silent'
  }

  restore (): void {
    this.#resetAll()
    this.#mode = 'open'
  }

  async close (): Promise<void> {
    this.#resetAll()
    await new Promise<void>((resolve) => this.#server.close(() => { resolve() }))
  }
}

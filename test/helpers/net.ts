import { connect, createServer } from 'node:net'

/** A port nothing listens on now, on 127.0.0.1 (taken from the kernel, then released). */
export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => { resolve(port) })
    })
  })
}

/** Whether something accepts connections on 127.0.0.1:`port` within a second (a service a test needs). */
export async function reachable (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    socket.setTimeout(1000)
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => { resolve(false) })
    socket.once('timeout', () => { socket.destroy(); resolve(false) })
  })
}

import { spawn, type ChildProcess } from 'node:child_process'

/**
 * A benchmarked server (serve.ts) in a child process of its own, as the runners (run.ts,
 * compare-builds.ts) start it and ask it over IPC: it reports its port once listening, and on
 * `'cpu'` its CPU time and its largest resident set since it was last asked.
 */
export interface ServerProcess { child: ChildProcess, base: string }

/** Starts `node <args>`; resolves once the server reports its port, rejects if it exits first or takes over 30 s. */
export async function startServerProcess (label: string, args: readonly string[], options: { cwd: string, env: NodeJS.ProcessEnv }): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`${label} server did not start within 30 s`)) }, 30_000)
    child.once('message', (message: { port: number }) => { clearTimeout(timer); resolve(message.port) })
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${label} server exited with code ${code} before listening`)) })
  })
  return { child, base: `http://127.0.0.1:${port}` }
}

/** The server's CPU time so far (user + system, µs), and its largest resident set (bytes) sampled since the last call. */
export async function sampleServer (child: ChildProcess): Promise<{ cpuUs: number, maxRss: number }> {
  return await new Promise((resolve) => {
    const onMessage = (message: { cpu?: NodeJS.CpuUsage, maxRss?: number }): void => {
      if (message.cpu === undefined) return
      child.off('message', onMessage)
      resolve({ cpuUs: message.cpu.user + message.cpu.system, maxRss: message.maxRss ?? 0 })
    }
    child.on('message', onMessage)
    child.send('cpu')
  })
}

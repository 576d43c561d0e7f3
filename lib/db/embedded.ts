import { createRequire } from 'node:module'
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, openAsBlob, readdirSync, readFileSync, readlinkSync, rmSync, statfsSync } from 'node:fs'
import { rename, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { extractSnapshot } from './snapshot-extract.js'
import type { PGlite, PGliteOptions } from '@electric-sql/pglite'

/** A PostgreSQL setting's value, as `-c name=value` takes it. */
export type EmbeddedSettingValue = string | number | boolean

/** The embedded PGlite the plugin creates (`db: { dataDir, settings, bootSnapshot, optimizeWasm }` or no `db`). */
export interface EmbeddedOptions {
  /**
   * Where the data is kept. Omitted: a new directory in the system's temporary directory, removed
   * when the app closes or the process exits (`scratchDataDir`); `'memory://'` keeps the files in
   * the process's memory instead.
   */
  dataDir?: string
  /** PostgreSQL settings (`shared_buffers`, `work_mem`...), over `EMBEDDED_SETTINGS`. */
  settings?: Readonly<Record<string, EmbeddedSettingValue>>
  /**
   * A file holding a freshly initialised cluster, from which a new database (no `dataDir`, or an
   * empty `dataDir`) starts instead of running `initdb`; written on first need. `false`: run
   * `initdb` every time. Default: a file per PGlite version in the system's temporary directory.
   */
  bootSnapshot?: string | false
  /**
   * Let V8 optimise PGlite's WebAssembly (TurboFan tier-up of hot functions), as it does by
   * default. `false` sets V8's `--liftoff-only` before PGlite starts: V8 then runs it as its
   * baseline compiler (Liftoff) compiled it, and the process holds about 100 MiB less and starts
   * with about 1 s less CPU (docs/operations.md). Opt-in because the flag applies to the whole
   * process (any WebAssembly compiled after it), which is the application's to decide, not a
   * library's.
   */
  optimizeWasm?: boolean
}

/**
 * The embedded server's PostgreSQL settings unless `settings` says otherwise. PGlite's own default
 * of `shared_buffers` is 128 MB, every page of which the WebAssembly heap ends up holding: the
 * resident set of an idle embedded app was 300-800 MiB. An embedded database serves one process
 * from files the operating system caches anyway, so a small buffer pool costs little: 8 MB held
 * the idle example app 10 MiB under 16 MB (docs/operations.md has the measurements).
 */
export const EMBEDDED_SETTINGS: Readonly<Record<string, EmbeddedSettingValue>> = {
  shared_buffers: '8MB',
  wal_buffers: '1MB',
  temp_buffers: '2MB'
}

/** A setting's name: letters, digits, `_` and `.` (for extensions' settings). */
export const SETTING_NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)?$/

let pgliteVersion: string | null = null
/** PGlite's version, which names its boot snapshot (its package exports no package.json). */
function version (): string {
  pgliteVersion ??= (JSON.parse(readFileSync(join(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8')) as { version: string }).version
  return pgliteVersion
}

export function defaultBootSnapshot (): string {
  return join(tmpdir(), `fastify-content-api-pglite-${version()}.tar`)
}

/** The `-c name=value` arguments: PGlite's own start parameters, then the settings. */
function startParams (PGliteClass: typeof PGlite, settings: Readonly<Record<string, EmbeddedSettingValue>>): string[] {
  const merged = { ...EMBEDDED_SETTINGS, ...settings }
  return [...PGliteClass.defaultStartParams, ...Object.entries(merged).flatMap(([name, value]) => ['-c', `${name}=${String(value)}`])]
}

/** PGlite's `file://`, `memory://`, `idb://`... data directories: not a plain path. */
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i

/** Whether `dataDir` already holds a cluster (PGlite resumes it) or will be initialised. */
function hasCluster (dataDir: string | undefined): boolean {
  return dataDir !== undefined && existsSync(join(dataDir, 'PG_VERSION'))
}

/**
 * The snapshot as a Blob backed by its file, not a copy in memory (PGlite reads it once, to
 * extract it); null when there is none. `openAsBlob` throws at once for a missing file.
 */
async function snapshotBlob (file: string): Promise<Blob | null> {
  try {
    return await openAsBlob(file)
  } catch {
    return null
  }
}

/**
 * The directories of databases without a `dataDir`, in the temporary directory:
 * `<prefix><PID namespace>-<pid>-<random>`. A PID means something only in its namespace: containers
 * sharing a temporary directory each see their own, and none removes another's.
 */
const SCRATCH_PREFIX = 'fastify-content-api-db-'

/** This process's PID namespace (Linux: the inode of /proc/self/ns/pid); elsewhere one for all. */
function pidNamespace (): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? 'pid'
  } catch {
    return 'pid'
  }
}

/** Whether process `pid` runs (one of another user counts: it may not be signalled, but it runs). */
function running (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Linux's memory file system, and the room it must have left to hold a scratch database. */
const SHM = '/dev/shm'
const SHM_FREE_BYTES = 1024 ** 3
/** The variables `os.tmpdir()` reads, in its order: any one set says where temporary files go. */
const TMPDIR_VARIABLES = ['TMPDIR', 'TMP', 'TEMP'] as const

/**
 * Where scratch directories go: the temporary directory the process was told to use (`TMPDIR`,
 * `TMP` or `TEMP`, as `os.tmpdir()` reads them), else Linux's memory file system when it has 1 GiB
 * free, else the system's temporary directory.
 * A scratch database is thrown away with its process, so its files gain nothing from a disk, and
 * creating them costs there: on the ext4 disk of the two-core machine of
 * docs/operations.md#embedded-pglite-memory-and-start-up, the blog example's start without a
 * `dataDir` (a new cluster's thousand files, its tables, its seed) took 2.2-3.2 s in /dev/shm
 * against 3.8-3.9 s in /tmp. The room is checked because a container's /dev/shm is 64 MiB unless
 * set otherwise, and a new cluster is 40 MiB before its first row. Memory there is the machine's,
 * not the process's resident set, as a disk file's cached pages are.
 */
export function scratchParent (): string {
  if (process.platform === 'linux' && TMPDIR_VARIABLES.every((name) => (process.env[name] ?? '') === '')) {
    try {
      accessSync(SHM, constants.W_OK)
      const { bavail, bsize } = statfsSync(SHM)
      if (bavail * bsize >= SHM_FREE_BYTES) return SHM
    } catch {
      // No /dev/shm, or not writable: the temporary directory.
    }
  }
  return tmpdir()
}

/**
 * A new directory for the files of a database without a `dataDir`, and its removal, which runs
 * once: when the database closes, or when the process exits without closing it. A process killed
 * first leaves its directory: the next one made in the same place (`scratchParent`) removes those
 * of processes of its PID namespace that no longer run.
 *
 * Why not PGlite's memory file system: there the database's files live in the process, as
 * JavaScript buffers (a new cluster's 40 MiB, grown by doubling), and loading the boot snapshot
 * leaves about 100 MiB of buffers that only a full collection frees. An idle example app was
 * 360 MiB there, 200 MiB with its files on disk (docs/operations.md#embedded-pglite-memory-and-start-up),
 * for writes about 10% slower. `dataDir: 'memory://'` still chooses PGlite's memory file system.
 */
export function scratchDataDir (): { dataDir: string, remove: () => void } {
  const parent = scratchParent()
  const mine = `${SCRATCH_PREFIX}${pidNamespace()}-`
  for (const name of readdirSync(parent)) {
    const pid = name.startsWith(mine) ? Number.parseInt(name.slice(mine.length), 10) : NaN
    if (Number.isInteger(pid) && pid !== process.pid && !running(pid)) rmSync(join(parent, name), { recursive: true, force: true })
  }
  // Throws where the temporary directory cannot be written: the caller then keeps the files in memory.
  const dataDir = mkdtempSync(join(parent, `${mine}${process.pid}-`))
  if (openScratchDirs.size === 0) process.on('exit', removeOpenScratchDirs)
  openScratchDirs.add(dataDir)
  const remove = (): void => {
    if (!openScratchDirs.delete(dataDir)) return
    if (openScratchDirs.size === 0) process.off('exit', removeOpenScratchDirs)
    rmSync(dataDir, { recursive: true, force: true })
  }
  return { dataDir, remove }
}

/** This process's scratch directories not yet removed; one `exit` listener for all (a test may open dozens of apps). */
const openScratchDirs = new Set<string>()

function removeOpenScratchDirs (): void {
  for (const dir of openScratchDirs) rmSync(dir, { recursive: true, force: true })
}

/** A started embedded database, and what its closing leaves to remove (nothing with a `dataDir`). */
export interface EmbeddedDatabase {
  pglite: PGlite
  /** Removes a database's scratch directory (`scratchDataDir`), after it has closed. */
  remove: () => void
}

/**
 * Starts the embedded PGlite, in `dataDir` or, without one, in a scratch directory removed at
 * close (`scratchDataDir`). A new cluster starts from the boot snapshot when there is one
 * (`initdb` is most of a cold start: about 2 s of CPU, and its WebAssembly heap stays with the
 * process), and the first start without one writes it, under another name then renamed, so that
 * no process reads a half-written file. A snapshot that does not load is removed and `initdb` runs.
 */
export async function createEmbedded (options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  // Loaded lazily: applications on PostgreSQL never pay for the WASM module.
  const { PGlite } = await import('@electric-sql/pglite')
  if (options.optimizeWasm === false) setFlagsFromString('--liftoff-only')
  if (options.dataDir !== undefined) return { pglite: await startEmbedded(PGlite, options), remove: nothingToRemove }
  let scratch: ReturnType<typeof scratchDataDir>
  try {
    scratch = scratchDataDir()
  } catch {
    // A read-only or full temporary directory: PGlite's memory file system still works, at the
    // memory cost scratchDataDir avoids.
    return { pglite: await startEmbedded(PGlite, { ...options, dataDir: 'memory://' }), remove: nothingToRemove }
  }
  try {
    return { pglite: await startEmbedded(PGlite, { ...options, dataDir: scratch.dataDir }, true), remove: scratch.remove }
  } catch (err) {
    scratch.remove()
    throw err
  }
}

/** A database in the application's `dataDir`, or in memory, leaves nothing to remove. */
function nothingToRemove (): void {}

/** `scratch`: `dataDir` is the plugin's own scratch directory, which holds nothing to keep. */
async function startEmbedded (PGlite: typeof import('@electric-sql/pglite').PGlite, options: EmbeddedOptions, scratch = false): Promise<PGlite> {
  const base: PGliteOptions = { startParams: startParams(PGlite, options.settings ?? {}), ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}) }
  const snapshot = options.bootSnapshot === undefined ? defaultBootSnapshot() : options.bootSnapshot
  if (snapshot === false || hasCluster(options.dataDir)) return await PGlite.create(base)

  const saved = await snapshotBlob(snapshot)
  if (saved !== null) {
    try {
      // A directory on disk is written with Node's file calls, then resumed (./snapshot-extract.ts);
      // in memory (and PGlite's other file systems) PGlite extracts the snapshot itself.
      if (options.dataDir !== undefined && !SCHEME.test(options.dataDir)) {
        extractSnapshot(snapshot, options.dataDir)
        return await PGlite.create(base)
      }
      return await PGlite.create({ ...base, loadDataDir: saved })
    } catch (err) {
      await unlink(snapshot).catch(() => {})
      // A half-extracted data directory would be resumed as if it were a cluster: the
      // application's is left for the operator (the next start, without the removed snapshot,
      // runs initdb in an empty one); a scratch directory is emptied, and initdb runs now.
      if (options.dataDir !== undefined && hasCluster(options.dataDir)) {
        if (!scratch) throw new Error(`PGlite could not start from the boot snapshot ${snapshot} in ${options.dataDir}; remove that directory and start again`, { cause: err })
        rmSync(options.dataDir, { recursive: true, force: true })
        mkdirSync(options.dataDir)
      }
    }
  }
  const created = await PGlite.create(base)
  // The snapshot is taken before the plugin writes anything: a bare, freshly initialised cluster.
  try {
    const dump = await created.dumpDataDir('none')
    const partial = `${snapshot}.${process.pid}`
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()))
    await rename(partial, snapshot)
  } catch {
    // Only a faster next start is lost (a read-only temporary directory, a full disk).
  }
  return created
}

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve, sep } from 'node:path'

/** A tar record: every header and every file's data is padded to a multiple of it. */
const RECORD = 512

/** A NUL-terminated field of a header, as tinytar (PGlite's tar) reads it. */
function text (tar: Buffer, offset: number, length: number): string {
  const end = tar.indexOf(0, offset)
  return tar.toString('utf8', offset, end === -1 || end > offset + length ? offset + length : end)
}

/** An octal number field (size, checksum). */
function octal (tar: Buffer, offset: number, length: number): number {
  const digits = text(tar, offset, length).trim()
  return digits === '' ? 0 : parseInt(digits, 8)
}

/** A header's checksum: the sum of its bytes, its own field counted as spaces. */
function checksum (tar: Buffer, offset: number): number {
  let sum = 0
  for (let i = 0; i < RECORD; i++) sum += i >= 148 && i < 156 ? 0x20 : tar[offset + i]
  return sum
}

/**
 * Writes the boot snapshot's files (a tar of a PGlite data directory, as `dumpDataDir('none')`
 * writes it) into a new `dataDir`, with Node's own file calls, for PGlite to resume it as an
 * existing cluster. PGlite's `loadDataDir` does the same through its Emscripten file system, which
 * checks every directory of every path and opens each file twice: for the thousand files of a new
 * cluster that was about 0.5 s of CPU and, on a busy disk, seconds of wall time (docs/operations.md).
 *
 * Read as PGlite reads it (tinytar): the 100-byte `name` only, regular files (`0`) and
 * directories (`5`); other entries skipped. A record whose magic or checksum is wrong, or a name
 * leading outside `dataDir`, throws before any file is written, as does an archive without a
 * cluster (no `PG_VERSION`): the caller then removes the snapshot and runs `initdb`.
 * Modification times are not restored (PostgreSQL does not read them).
 *
 * Synchronous on purpose. Creating the thousand files is the kernel's work, and on some virtual
 * disks costs about 1 ms a file (0.3-0.7 s of system time); written through libuv's thread pool
 * instead, 1, 2 or 8 at a time while the main thread loaded the GraphQL area, the blog example's
 * start took as long or longer and 0.4-0.7 s more CPU (docs/operations.md#embedded-pglite-memory-and-start-up).
 */
export function extractSnapshot (file: string, dataDir: string): void {
  const tar = readFileSync(file)
  const root = resolve(dataDir)
  // Every record is checked before anything is written: an archive refused here leaves the
  // directory as it was, and the caller's initdb starts from nothing.
  const entries: Array<{ path: string, directory: boolean, data: Buffer }> = []
  for (let offset = 0; offset + RECORD <= tar.length;) {
    // Two zero records end the archive; one is enough to stop reading.
    if (tar.subarray(offset, offset + RECORD).every((byte) => byte === 0)) break
    const magic = tar.toString('latin1', offset + 257, offset + 263)
    if (!magic.startsWith('ustar') || octal(tar, offset + 148, 8) !== checksum(tar, offset)) {
      throw new Error(`the boot snapshot ${file} is not a tar archive PGlite wrote (record at byte ${offset})`)
    }
    const type = (parseInt(String.fromCharCode(tar[offset + 156]), 10) || 0) % 8
    const size = type === 0 ? octal(tar, offset + 124, 12) : 0
    const name = text(tar, offset, 100)
    const data = offset + RECORD
    offset = data + Math.ceil(size / RECORD) * RECORD
    if (offset > tar.length) throw new Error(`the boot snapshot ${file} is truncated`)
    const path = join(root, name)
    if (path !== root && !path.startsWith(root + sep)) throw new Error(`the boot snapshot ${file} names a path outside the data directory: ${name}`)
    if (type === 5 || type === 0) entries.push({ path, directory: type === 5, data: tar.subarray(data, data + size) })
  }
  if (!entries.some((entry) => entry.path === join(root, 'PG_VERSION'))) throw new Error(`the boot snapshot ${file} holds no cluster`)

  // PGlite's NODEFS creates the directory itself, not its parents.
  if (!existsSync(root)) mkdirSync(root)
  const made = new Set<string>([root])
  const directory = (path: string): void => {
    if (made.has(path)) return
    mkdirSync(path, { recursive: true })
    made.add(path)
  }
  for (const entry of entries) {
    if (entry.directory) directory(entry.path)
    else {
      directory(dirname(entry.path))
      writeFileSync(entry.path, entry.data)
    }
  }
}

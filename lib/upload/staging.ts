import { createReadStream, createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable, Transform, type TransformCallback } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { FastifyRequest } from 'fastify'
import type { MultipartFile, MultipartValue } from '@fastify/multipart'
import { FileTooLargeError, UploadError } from '../errors.js'
import { checkFileName } from './file-name.js'

/**
 * Uploads are streamed to a private temporary directory before anything else happens: the size
 * limit, the content check and image decoding all run on a complete file on disk, and the
 * provider only ever receives files that passed. Memory stays bounded by stream buffers whatever
 * the file's size; the directory is removed when the request ends, whatever happened.
 */

export interface StagedFile {
  /** Where the bytes are, inside the staging directory. */
  path: string
  /** The client's name for the file (checked: no path, no control characters). */
  filename: string
  /** The Content-Type the client declared, or ''. */
  declaredMime: string
  /** Bytes. */
  size: number
}

export interface Staging {
  readonly dir: string
  readonly files: StagedFile[]
  /** Text fields by name, each value in arrival order. */
  readonly fields: Map<string, string[]>
  /** Removes the directory and everything in it. */
  cleanup (): Promise<void>
}

/** A file given by application code rather than a multipart request. */
export type UploadInput = { name: string, type?: string } & ({ stream: Readable } | { buffer: Buffer } | { path: string })

export interface StagingLimits {
  sizeLimit: number
  maxFiles: number
  tmpDir?: string
}

/** The multipart field that carries files, as in Strapi. */
export const FILES_FIELD = 'files'
/** Limits on the text fields around the files: fileInfo, ref, refId, field. */
const MAX_FIELDS = 100
const MAX_FIELD_BYTES = 1024 * 1024

export async function createStaging (tmpDir: string | undefined): Promise<Staging> {
  const dir = await mkdtemp(join(tmpDir ?? tmpdir(), 'fca-upload-'))
  return { dir, files: [], fields: new Map(), cleanup: async () => { await rm(dir, { recursive: true, force: true }) } }
}

/** Counts bytes on their way to disk and fails as soon as they pass the limit. */
class ByteCounter extends Transform {
  bytes = 0
  readonly #limit: number
  readonly #name: string

  constructor (limit: number, name: string) {
    super()
    this.#limit = limit
    this.#name = name
  }

  override _transform (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length
    if (this.bytes > this.#limit) callback(new FileTooLargeError(this.#name, this.#limit))
    else callback(null, chunk)
  }
}

/** Writes one file into the staging directory, streaming, under the size limit. */
export async function stageStream (staging: Staging, source: Readable, filename: string, declaredMime: string, sizeLimit: number): Promise<StagedFile> {
  checkFileName(filename)
  const path = join(staging.dir, String(staging.files.length))
  const counter = new ByteCounter(sizeLimit, filename)
  await pipeline(source, counter, createWriteStream(path, { flags: 'wx' }))
  // Busboy stops at its own fileSize limit and flags the stream rather than failing it.
  if ((source as { truncated?: boolean }).truncated === true) throw new FileTooLargeError(filename, sizeLimit)
  const file = { path, filename, declaredMime, size: counter.bytes }
  staging.files.push(file)
  return file
}

/** Stages files handed over by application code (`app.contentApi.upload.upload(...)`). */
export async function stageInputs (staging: Staging, inputs: readonly UploadInput[], limits: StagingLimits): Promise<void> {
  if (inputs.length > limits.maxFiles) throw tooManyFiles(limits.maxFiles)
  for (const input of inputs) {
    const source = 'stream' in input
      ? input.stream
      : 'buffer' in input
        ? Readable.from([input.buffer])
        : createReadStream(input.path)
    await stageStream(staging, source, input.name, input.type ?? '', limits.sizeLimit)
  }
}

const tooManyFiles = (max: number): UploadError =>
  new UploadError('FCA_ERR_UPLOAD_TOO_MANY_FILES', `Too many files: at most ${max} per request`, { maxFiles: max })

/** @fastify/multipart's and busboy's failures, as the client's mistakes they are. */
function multipartError (err: unknown, limits: StagingLimits, current: string | null): unknown {
  const e = err as { code?: string, message?: string }
  switch (e?.code) {
    case 'FST_FILES_LIMIT': return tooManyFiles(limits.maxFiles)
    case 'FST_REQ_FILE_TOO_LARGE': return new FileTooLargeError(current ?? 'A file', limits.sizeLimit)
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT': return new UploadError('FCA_ERR_UPLOAD_MALFORMED', `Too many multipart fields (at most ${MAX_FIELDS})`)
    case 'FST_PROTO_VIOLATION':
    case 'FST_INVALID_JSON_FIELD_ERROR':
    case 'FST_MP_PREMATURE_CLOSE': return new UploadError('FCA_ERR_UPLOAD_MALFORMED', `Invalid multipart body: ${e.message ?? ''}`.trim())
  }
  if (err instanceof Error && !('status' in err) && /multipart|part|boundary|form/i.test(err.message)) {
    // Busboy's parse errors ("Unexpected end of form", "Malformed part header"...).
    return new UploadError('FCA_ERR_UPLOAD_MALFORMED', `Invalid multipart body: ${err.message}`)
  }
  return err
}

/**
 * Reads a multipart request: files of the `files` field are staged as they arrive, text fields
 * collected. Any other file field, a file over `sizeLimit`, more than `maxFiles` files or a
 * malformed body is a 4xx; the caller cleans the staging directory up.
 */
export async function stageMultipart (request: FastifyRequest, staging: Staging, limits: StagingLimits): Promise<void> {
  let current: string | null = null
  try {
    const parts = request.parts({
      // Names are checked, not trimmed: busboy would reduce `../../x.png` to `x.png` silently.
      preservePath: true,
      limits: { fileSize: limits.sizeLimit, files: limits.maxFiles, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES, parts: limits.maxFiles + MAX_FIELDS }
    })
    for await (const part of parts) {
      if (part.type === 'file') {
        current = part.filename
        await stageFilePart(staging, part, limits)
        current = null
      } else {
        collectField(staging, part)
      }
    }
  } catch (err) {
    throw multipartError(err, limits, current)
  }
}

async function stageFilePart (staging: Staging, part: MultipartFile, limits: StagingLimits): Promise<void> {
  if (part.fieldname !== FILES_FIELD) {
    part.file.resume()
    throw new UploadError('FCA_ERR_UPLOAD_UNEXPECTED_FIELD', `Unexpected file field "${part.fieldname}": files are sent in the "${FILES_FIELD}" field`, { field: part.fieldname })
  }
  await stageStream(staging, part.file, part.filename, part.mimetype ?? '', limits.sizeLimit)
}

function collectField (staging: Staging, part: MultipartValue): void {
  if (part.valueTruncated) {
    throw new UploadError('FCA_ERR_UPLOAD_MALFORMED', `The field "${part.fieldname}" is longer than ${MAX_FIELD_BYTES} bytes`, { field: part.fieldname })
  }
  const value = typeof part.value === 'string' ? part.value : JSON.stringify(part.value)
  const values = staging.fields.get(part.fieldname)
  if (values === undefined) staging.fields.set(part.fieldname, [value])
  else values.push(value)
}

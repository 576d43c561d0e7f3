import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { Sharp, SharpOptions } from 'sharp'
import { UploadError } from '../errors.js'

/**
 * Image handling, as Strapi's image-manipulation service does it. Width and height always come
 * from the image's own header (`image-size`, which reads at most the first 512 KB). With `sharp`
 * installed (an optional peer dependency), images are also decoded (a corrupt one is refused),
 * optimised, and given a thumbnail and responsive formats; without it those steps are skipped and
 * `formats` stays null.
 */

type SharpFactory = (input?: string, options?: SharpOptions) => Sharp

let sharpLoader: Promise<SharpFactory | null> | null = null

/** sharp, when installed; null otherwise (looked up once). */
export async function loadSharp (): Promise<SharpFactory | null> {
  sharpLoader ??= import('sharp').then((m) => (m.default ?? m) as unknown as SharpFactory, () => null)
  return await sharpLoader
}

/** Formats sharp decodes to check and measure (Strapi's FORMATS_TO_PROCESS). */
const PROCESSED = new Set(['jpeg', 'png', 'webp', 'tiff', 'svg', 'gif', 'avif'])
/** Formats re-encoded by `sizeOptimization` / `autoOrientation` (FORMATS_TO_OPTIMIZE). */
const OPTIMIZED = new Set(['jpeg', 'png', 'webp', 'tiff', 'avif'])
/** Formats given a thumbnail and responsive formats (FORMATS_TO_RESIZE). */
const RESIZED = new Set(['jpeg', 'png', 'webp', 'tiff', 'gif'])
/** Strapi's thumbnail box. */
export const THUMBNAIL = { width: 245, height: 156 } as const

/** Image types whose bytes must decode; a failure is a corrupt upload, not a detail. */
const RASTER = /^image\/(png|jpeg|gif|webp|tiff|bmp|avif|heic|heif|x-icon|vnd\.microsoft\.icon)$/

export interface ImageFile {
  path: string
  mime: string
  size: number
  width: number | null
  height: number | null
  /** sharp's name for the format (`png`), when sharp read it. */
  format: string | null
}

export interface ImageSettings {
  sizeOptimization: boolean
  autoOrientation: boolean
  thumbnail: boolean
  responsiveDimensions: boolean
  breakpoints: Record<string, number>
}

const invalid = (name: string): UploadError => new UploadError('FCA_ERR_UPLOAD_INVALID_IMAGE', 'File is not a valid image', { name })

/**
 * Reads an image's dimensions (and, with sharp, decodes it) and applies the optimisation
 * settings. Returns the file to store: the same one, or its re-encoded copy in `workDir`.
 *
 * Strapi 5 keeps the re-encoded image even when it is larger than the original (its size check
 * compares with a size it never has for uploads); so does this, so that records match Strapi's.
 * Turn `sizeOptimization` off to store originals byte for byte.
 */
export async function inspectImage (file: ImageFile, name: string, workDir: string, settings: ImageSettings): Promise<ImageFile> {
  if (!file.mime.startsWith('image/')) return file
  const raster = RASTER.test(file.mime)
  let measured: { width: number, height: number } | null = null
  // Loaded by the first image, not at start-up (an ES module graph of about 30 files).
  const { imageSizeFromFile } = await import('image-size/fromFile')
  try {
    const size = await imageSizeFromFile(file.path)
    measured = { width: size.width, height: size.height }
  } catch {
    if (raster) throw invalid(name)
  }
  const result: ImageFile = { ...file, width: measured?.width ?? null, height: measured?.height ?? null }
  const sharp = await loadSharp()
  if (sharp === null) return result
  let format: string | null = null
  try {
    format = (await sharp(file.path).metadata()).format ?? null
    if (format !== null && PROCESSED.has(format) && format !== 'svg') await sharp(file.path).stats()
  } catch {
    if (raster) throw invalid(name)
    return result
  }
  result.format = format
  if (format === null || !OPTIMIZED.has(format) || !(settings.sizeOptimization || settings.autoOrientation)) return result
  let transformer = sharp(file.path).toFormat(format as 'png', { quality: settings.sizeOptimization ? 80 : 100 })
  if (settings.autoOrientation) transformer = transformer.rotate()
  const optimized = join(workDir, `optimized-${Date.now()}-${Math.random().toString(36).slice(2)}`)
  const info = await transformer.toFile(optimized)
  return { ...result, path: optimized, size: info.size, width: info.width, height: info.height }
}

export interface GeneratedFormat {
  /** `thumbnail`, or a breakpoint's name. */
  key: string
  path: string
  width: number
  height: number
  size: number
}

/**
 * The thumbnail (245x156, `fit: inside`) when the image is larger, and one format per breakpoint
 * the image exceeds, each written to `workDir`. None without sharp or for other formats.
 */
export async function generateFormats (file: ImageFile, workDir: string, settings: ImageSettings): Promise<GeneratedFormat[]> {
  const sharp = await loadSharp()
  if (sharp === null || file.format === null || !RESIZED.has(file.format) || file.width === null || file.height === null) return []
  const { width, height } = file
  const wanted: Array<{ key: string, box: { width: number, height: number } }> = []
  if (settings.thumbnail && (width > THUMBNAIL.width || height > THUMBNAIL.height)) wanted.push({ key: 'thumbnail', box: THUMBNAIL })
  if (settings.responsiveDimensions) {
    for (const [key, breakpoint] of Object.entries(settings.breakpoints)) {
      if (breakpoint < width || breakpoint < height) wanted.push({ key, box: { width: breakpoint, height: breakpoint } })
    }
  }
  const formats: GeneratedFormat[] = []
  for (const { key, box } of wanted) {
    const path = join(workDir, `format-${key}-${formats.length}`)
    const info = await sharp(file.path).resize({ ...box, fit: 'inside' }).toFormat(file.format as 'png').toFile(path)
    formats.push({ key, path, width: info.width, height: info.height, size: (await stat(path)).size })
  }
  return formats
}

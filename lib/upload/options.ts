/** Upload options (to be completed by the upload module): see docs/upload.md. */
export interface UploadOptions {
  sizeLimit?: number
}

'use strict'
// The package's `require` entry. fastify-content-api is an ES module: Node 20.19+ and 22.12+ load
// it from require() (require(esm); its graph has no top-level await), and require() returns the
// same module namespace as import(): `const { default: contentApi, defineContentType } = require(...)`.
// Where Node cannot (older versions, or run with --no-experimental-require-module), its own error
// would name this file as the caller, so say instead what the application can do. The code is
// Node's, which loaders that fall back to import() on ERR_REQUIRE_ESM recognise.
if (process.features.require_module !== true) {
  const error = new Error(`fastify-content-api is an ES module, and this Node.js (${process.version}) cannot require() ES modules. ` +
    'Load it with import (an ES module application, or `const { default: contentApi } = await import(\'fastify-content-api\')` from CommonJS), ' +
    'or run Node.js 20.19+ or 22.12+ without --no-experimental-require-module.')
  error.code = 'ERR_REQUIRE_ESM'
  throw error
}
module.exports = require('../dist/lib/index.js')

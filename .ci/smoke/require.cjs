'use strict'
// require() of the package from a CommonJS application (.ci/run copies this file into the fresh
// app). Where Node can require() ES modules it returns the same module as import(); where it cannot
// (run with --no-experimental-require-module to see it) it fails saying what to do instead.
const assert = require('node:assert/strict')

if (process.features.require_module) {
  const api = require('fastify-content-api')
  assert.equal(typeof api.default, 'function', 'the plugin is the default export')
  assert.equal(typeof api.defineContentType, 'function')
  import('fastify-content-api').then((esm) => {
    assert.equal(api.default, esm.default, 'one module for require() and import()')
    console.log('require: the same module as import()')
  })
} else {
  assert.throws(() => require('fastify-content-api'), (err) => {
    assert.equal(err.code, 'ERR_REQUIRE_ESM')
    assert.match(err.message, /^fastify-content-api is an ES module, and this Node\.js \(v[\d.]+\) cannot require\(\) ES modules\. Load it with import .* or run Node\.js 20\.19\+ or 22\.12\+/)
    return true
  })
  console.log('require: without require(esm), an error that says to use import() or a newer Node.js')
}

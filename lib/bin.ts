#!/usr/bin/env node
import { main } from './cli.js'

// The package's `bin`: always runs the CLI. npm links it as node_modules/.bin/fastify-content-api, a
// symlink on POSIX, so a module that asked "am I the main module?" by comparing process.argv[1]
// with its own URL would see the link's path and silently do nothing.
main(process.argv.slice(2)).then((code) => { process.exitCode = code }, (err: unknown) => {
  console.error(err)
  process.exitCode = 1
})

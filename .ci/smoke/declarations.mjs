// Every package the installed declarations import, from the `types` entry on, must be one of the
// package's dependencies: an application compiling against them has nothing else (no
// devDependencies such as @fastify/swagger or @types/pg, maybe no optional peers such as sharp).
// An import TypeScript cannot resolve is an error with skipLibCheck off, and a silent `any` with it on.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join, resolve } from 'node:path'

const root = 'node_modules/fastify-content-api'
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const imports = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|<reference\s+types=)["']([^"']+)["']/g
// Doc comments show SQL (`from "articles"`): read the code only (`/// <reference>` is code).
const comments = /\/\*[\s\S]*?\*\/|^\s*\/\/(?!\/\s*<reference).*$/gm
const packages = new Map() // package name -> a declaration file that imports it
const seen = new Set()

function walk (file) {
  if (seen.has(file)) return
  seen.add(file)
  for (const [, specifier] of readFileSync(file, 'utf8').replace(comments, '').matchAll(imports)) {
    if (specifier.startsWith('.')) walk(resolve(dirname(file), specifier.replace(/\.js$/, '.d.ts')))
    else if (!specifier.startsWith('node:') && !builtinModules.includes(specifier)) {
      const name = specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')
      if (!packages.has(name)) packages.set(name, file)
    }
  }
}
walk(join(root, pkg.exports['.'].types))

const stray = [...packages].filter(([name]) => !(name in pkg.dependencies)).map(([name, file]) => `${name} (${file})`)
assert.deepEqual(stray, [], 'declarations import packages that are not dependencies')
console.log(`declarations: ${seen.size} files import ${[...packages.keys()].sort().join(', ')}: all dependencies`)

// The client (`fastify-content-api/client`) runs in browsers: its declarations import no package at all.
packages.clear()
seen.clear()
walk(join(root, pkg.exports['./client'].types))
assert.deepEqual([...packages.keys()], [], 'the client\'s declarations import packages')
console.log(`client declarations: ${seen.size} files, no package imported`)

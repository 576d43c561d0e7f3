import { PGlite } from '@electric-sql/pglite'
import fs from 'node:fs'
let t=performance.now()
const a = await PGlite.create()
console.log('create', Math.round(performance.now()-t))
t=performance.now()
const dump = await a.dumpDataDir('none')
console.log('dump', Math.round(performance.now()-t), dump.size)
fs.writeFileSync('/tmp/pgl.tar', Buffer.from(await dump.arrayBuffer()))
await a.close()
t=performance.now()
const b = await PGlite.create({ loadDataDir: new Blob([fs.readFileSync('/tmp/pgl.tar')]) })
await b.query('select 1')
console.log('from dump', Math.round(performance.now()-t))

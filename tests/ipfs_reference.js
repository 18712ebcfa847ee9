#!/usr/bin/env node
// Reference CIDs for tests/unit/test_ipfs.py: what `ipfs add --cid-version=1` of Kubo gives,
// computed by the npm package ipfs-unixfs-importer with Kubo's defaults spelled out: CIDv1,
// raw leaves, fixed 262144-byte chunks, balanced layout of at most 174 links per node, a
// one-chunk file reduced to its raw leaf, dag-pb links written before data.
//
// Usage: node tests/ipfs_reference.js FILE...   (one CID per line, in order)
//        node tests/ipfs_reference.js < FILE     (stdin when no FILE is given)
// Test-only knobs, to reach deep trees with little data: --chunk-size N, --max-links N
// (defaults 262144 and 174, Kubo's).
// CommonJS on purpose (package.json has no "type": "module"); the importer is ESM, so it is
// loaded with import().
'use strict'

const fs = require('node:fs')

// The importer only ever calls put(); the blocks themselves are not needed, just the root CID.
const blockstore = {
  async put (cid) {
    return cid
  }
}

async function * chunksOf (stream) {
  for await (const chunk of stream) {
    yield chunk
  }
}

async function main () {
  const { importer } = await import('ipfs-unixfs-importer')
  const { fixedSize } = await import('ipfs-unixfs-importer/chunker')
  const { balanced } = await import('ipfs-unixfs-importer/layout')
  const args = process.argv.slice(2)
  const knobs = { '--chunk-size': 262144, '--max-links': 174 }
  const paths = []
  for (let i = 0; i < args.length; i++) {
    if (args[i] in knobs) {
      knobs[args[i]] = Number.parseInt(args[++i], 10)
    } else {
      paths.push(args[i])
    }
  }
  const options = {
    cidVersion: 1,
    rawLeaves: true,
    chunker: fixedSize({ chunkSize: knobs['--chunk-size'] }),
    layout: balanced({ maxChildrenPerNode: knobs['--max-links'] }),
    reduceSingleLeafToSelf: true,
    fieldOrder: 'links-first',
    wrapWithDirectory: false
  }
  const sources = paths.length > 0 ? paths.map((p) => fs.createReadStream(p)) : [process.stdin]
  for (const source of sources) {
    let root = null
    for await (const entry of importer([{ content: chunksOf(source) }], blockstore, options)) {
      root = entry
    }
    if (root === null) {
      throw new Error('importer returned nothing')
    }
    process.stdout.write(root.cid.toString() + '\n')
  }
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + '\n')
  process.exit(1)
})

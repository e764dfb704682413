// SPDX-License-Identifier: Apache-2.0
// Reads one of ddmc's exports back with its consumers' own code and prints what it holds as one
// JSON document on stdout (tests/exports/exports.py compares that with what the VM did); any
// error a consumer raises, or a rule it states that the file breaks, exits 1 with the reason.
//
//   node check_exports.mjs speedscope FILE        speedscope's published schema (ajv), then its
//                                                 evented-profile rules (ordered, closes match)
//   node check_exports.mjs pprof FILE PROFILE.proto  decoded by protobufjs against pprof's own
//                                                 profile.proto and by pprof-format's decoder
//   node check_exports.mjs chrome FILE            Trace Event JSON parsed by Chrome DevTools'
//                                                 trace engine (its Performance panel's model):
//                                                 the processes and threads it sees, their slices
import fs from 'node:fs';
import path from 'node:path';
import {createRequire} from 'node:module';

const require = createRequire(import.meta.url);

function fail(msg) {
  process.stderr.write(`check_exports: ${msg}\n`);
  process.exit(1);
}

function speedscope(file) {
  const Ajv = require('ajv');
  const schemaPath = path.join(path.dirname(require.resolve('speedscope/package.json')),
                               'dist/release/file-format-schema.json');
  const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  const ajv = new Ajv({allErrors: true, strict: false});
  const validate = ajv.compile(schema);
  if (!validate(doc)) fail(`not a speedscope file: ${ajv.errorsText(validate.errors)}`);
  const frames = doc.shared.frames;
  const out = {name: doc.name, frames: frames.length, profiles: []};
  for (const p of doc.profiles) {
    if (p.type !== 'evented') fail(`profile ${p.name}: type ${p.type}`);
    // What speedscope's evented importer requires: events in time order, each close naming the
    // frame on top of the stack, every frame index in shared.frames, nothing open at the end.
    const stack = [];
    const opens = {};
    let last = p.startValue;
    let maxDepth = 0;
    for (const e of p.events) {
      if (e.at < last) fail(`profile ${p.name}: event at ${e.at} before ${last}`);
      if (e.frame < 0 || e.frame >= frames.length) fail(`profile ${p.name}: frame ${e.frame} out of range`);
      last = e.at;
      if (e.type === 'O') {
        stack.push(e.frame);
        maxDepth = Math.max(maxDepth, stack.length);
        const n = frames[e.frame].name;
        opens[n] = (opens[n] || 0) + 1;
      } else if (stack.pop() !== e.frame) {
        fail(`profile ${p.name}: a close of ${frames[e.frame].name} at ${e.at} is not the top frame`);
      }
    }
    if (stack.length) fail(`profile ${p.name}: ${stack.length} frames still open`);
    if (p.endValue < last) fail(`profile ${p.name}: endValue ${p.endValue} before the last event ${last}`);
    out.profiles.push({name: p.name, unit: p.unit, start: p.startValue, end: p.endValue, events: p.events.length,
                       maxDepth, opens});
  }
  return out;
}

async function pprof(file, protoPath) {
  const protobuf = require('protobufjs');
  const root = protobuf.loadSync(protoPath);
  const Profile = root.lookupType('perftools.profiles.Profile');
  const bytes = fs.readFileSync(file);
  const msg = Profile.decode(bytes);
  const err = Profile.verify(msg);
  if (err) fail(`profile.proto: ${err}`);
  const p = Profile.toObject(msg, {longs: Number, defaults: true});
  const st = p.stringTable;
  if (st[0] !== '') fail('string_table[0] is not ""');
  const str = (i) => {
    if (i < 0 || i >= st.length) fail(`string index ${i} out of range`);
    return st[i];
  };
  const funcs = new Map(p.function.map((f) => [f.id, f]));
  const locs = new Map(p.location.map((l) => [l.id, l]));
  for (const f of p.function) if (f.id === 0) fail('function id 0');
  for (const l of p.location) {
    if (l.id === 0) fail('location id 0');
    for (const ln of l.line) if (!funcs.has(ln.functionId)) fail(`location ${l.id}: no function ${ln.functionId}`);
  }
  const types = p.sampleType.map((t) => [str(t.type), str(t.unit)]);
  // Per function: its total as a leaf (self) and wherever it is on the stack (once per sample).
  const self = {}, incl = {}, labels = {};
  for (const s of p.sample) {
    if (s.value.length !== types.length) fail(`a sample has ${s.value.length} values for ${types.length} types`);
    const names = s.locationId.map((id) => {
      const l = locs.get(id);
      if (!l) fail(`sample: no location ${id}`);
      return str(funcs.get(l.line[0].functionId).name);
    });
    if (names.length) {
      self[names[0]] = (self[names[0]] || Array(types.length).fill(0)).map((v, i) => v + s.value[i]);
      for (const n of new Set(names)) incl[n] = (incl[n] || Array(types.length).fill(0)).map((v, i) => v + s.value[i]);
    }
    for (const lb of s.label) {
      const k = str(lb.key);
      const v = lb.str ? str(lb.str) : String(lb.num);
      labels[k] = labels[k] || {};
      labels[k][v] = (labels[k][v] || 0) + 1;
    }
  }
  // The second decoder: Datadog's pprof-format (what dd-trace reads and writes).
  const pf = await import('pprof-format');
  const q = pf.Profile.decode(new Uint8Array(bytes));
  if (q.sample.length !== p.sample.length || q.location.length !== p.location.length ||
      q.function.length !== p.function.length || q.stringTable.strings.length !== st.length)
    fail('pprof-format decodes it differently');
  const files = [...new Set(p.function.map((f) => str(f.filename)))].filter((x) => x);
  return {sampleTypes: types, defaultSampleType: str(p.defaultSampleType), samples: p.sample.length,
          functions: p.function.length, locations: p.location.length, timeNanos: p.timeNanos,
          durationNanos: p.durationNanos, self, incl, labels, files};
}

async function chrome(file) {
  // The engine's own loader (gzip or not, {traceEvents} or a bare array); it polyfills DOMRect.
  const {analyzeTrace} = await import('@paulirish/trace_engine/analyze-trace.mjs');
  const {parsedTrace} = await analyzeTrace(file);
  const d = parsedTrace.data || parsedTrace;
  const processes = [];
  for (const [pid, proc] of d.Renderer.processes) {
    const threads = [];
    for (const [tid, th] of proc.threads) {
      const slices = {};
      for (const e of th.entries) slices[e.name] = (slices[e.name] || 0) + 1;
      threads.push({tid, name: th.name, entries: th.entries.length, slices});
    }
    processes.push({pid, threads});
  }
  const names = {};
  for (const [pid, ev] of d.Meta.processNames) names[pid] = ev.args.name;
  return {processes, processNames: names, bounds: d.Meta.traceBounds};
}

const [what, file, extra] = process.argv.slice(2);
let result;
if (what === 'speedscope') result = speedscope(file);
else if (what === 'pprof') result = await pprof(file, extra);
else if (what === 'chrome') result = await chrome(file);
else fail(`usage: check_exports.mjs speedscope FILE | pprof FILE PROFILE.proto | chrome FILE`);
process.stdout.write(JSON.stringify(result) + '\n');

// Opens a `profagent report --format html` page in headless Chromium and checks it against the
// `--format json` document it was made from:
//
//   node html_check.mjs --html PAGE.html --json REPORT.json [--screenshot OUT.png]
//                       [--node-modules DIR] [--chromium PATH]
//
// The page is loaded from file:// with every other request aborted and counted (must be 0);
// console errors and page errors must be 0; every chart must hold the bars the JSON implies
// (steps, overview rows, operator types, top kernels, memory points) with lengths proportional
// to their values; every summary must have its table(s) with the JSON's row count and names; a
// screenshot of each chart must really show its bar colour. Prints one line per failure and
// exits 1, or one summary line and exits 0.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { decodePng, countColours } from './png_pixels.mjs';

const TOP_KERNELS = 15;  // the page shows the 15 kernels with the most GPU time

function parseArgs(argv) {
  const args = { nodeModules: process.env.PROFAGENT_NODE_MODULES, chromium: process.env.PROFAGENT_CHROMIUM || '/usr/bin/chromium' };
  const names = { '--html': 'html', '--json': 'json', '--screenshot': 'screenshot', '--node-modules': 'nodeModules', '--chromium': 'chromium' };
  for (let i = 2; i < argv.length; i += 2) {
    if (!names[argv[i]] || argv[i + 1] === undefined) usage(`unknown or incomplete option ${argv[i]}`);
    args[names[argv[i]]] = argv[i + 1];
  }
  if (!args.html || !args.json) usage('--html and --json are required');
  return args;
}

function usage(message) {
  console.error(`html_check: ${message}\nusage: node html_check.mjs --html FILE --json FILE [--screenshot PNG] [--node-modules DIR] [--chromium PATH]`);
  process.exit(2);
}

function loadPuppeteer(nodeModules) {
  // puppeteer-core lives in the build's own node folder (scripts/setup.sh), not next to this file.
  const base = nodeModules ? path.resolve(nodeModules) + path.sep : import.meta.url;
  return createRequire(base)('puppeteer-core');
}

const failures = [];
let checks = 0;
function expect(condition, message) {
  checks++;
  if (!condition) failures.push(message);
  return condition;
}

// ---- what the JSON implies ---------------------------------------------------------------

function topKernelNames(kernel) {
  const total = (r) => (r.gpu ? r.gpu.total_ns : 0);
  return (kernel.rows || []).filter((r) => (r.depth || 0) === 0)
    .slice().sort((a, b) => total(b) - total(a)).slice(0, TOP_KERNELS).map((r) => r.name);
}

// summary name -> [{part, rows, names?}]: the tables the page must have and their data rows.
function expectedTables(name, s) {
  const names = (rows) => rows.map((r) => r.name);
  switch (name) {
    case 'device': return [{ rows: s.rows.length, names: names(s.rows) }];
    case 'overview': return [{ rows: s.cpu.length + s.gpu.length, names: s.cpu.concat(s.gpu).map((r) => r.type) }];
    case 'operator': case 'user_defined':
      return s.threads.length === 0 ? [{ rows: 0 }] : s.threads.map((t) => ({ thread: String(t.thread), rows: t.rows.length, names: names(t.rows) }));
    case 'perf': return [{ part: 'stats', rows: 3 }, { part: 'steps', rows: s.steps.length, names: s.steps.map((x) => String(x.step)) }];
    case 'step_trace': {
      const labels = s.steps.map((x) => String(x.step)).concat(s.steps.length && s.average ? ['Average'] : []);
      return [{ rows: labels.length, names: labels }];
    }
    case 'op_type': return [{ rows: s.rows.length, names: s.rows.map((r) => r.type) }];
    case 'memory': return [{ rows: s.devices.length, names: s.devices.map((d) => String(d.device)) }];
    default: return [{ rows: s.rows.length, names: names(s.rows) }];  // model, distributed, kernel, …
  }
}

// chart name -> {bars, values?, names?} or {empty: true}
function expectedCharts(summaries) {
  const charts = {};
  const bars = (values, labels) => (values.length ? { bars: values.length, values, names: labels } : { empty: true });
  if (summaries.step_trace) {
    const steps = summaries.step_trace.steps;
    charts.step_trace = steps.length ? { bars: steps.length, steps } : { empty: true };
  }
  if (summaries.overview) {
    const rows = summaries.overview.cpu.concat(summaries.overview.gpu);
    charts.overview = bars(rows.map((r) => r.time_ns));
  }
  if (summaries.op_type) {
    const key = summaries.op_type.metric === 'cpu' ? 'cpu_ns' : 'device_ns';
    charts.op_type = bars(summaries.op_type.rows.map((r) => r[key]), summaries.op_type.rows.map((r) => r.type));
  }
  if (summaries.kernel) {
    const top = topKernelNames(summaries.kernel);
    const byName = new Map(summaries.kernel.rows.map((r) => [r.name, r.gpu ? r.gpu.total_ns : 0]));
    charts.kernel = bars(top.map((n) => byName.get(n)), top);
  }
  return charts;
}

// ---- what the page shows ------------------------------------------------------------------

// Everything the checks need from one trace's section, read in the page.
function readSection(index) {
  const section = document.querySelector(`section[data-trace="${index}"]`);
  if (!section) return null;
  const chart = (name) => {
    const svg = section.querySelector(`svg[data-chart="${name}"]`);
    if (!svg) return { empty: !!section.querySelector(`[data-empty="${name}"]`), missing: true };
    const barNodes = [...svg.querySelectorAll('[data-bar]')];
    return {
      bars: barNodes.length,
      values: barNodes.map((b) => Number(b.getAttribute('data-value'))),
      lengths: barNodes.map((b) => b.getBBox().width),
      names: barNodes.map((b) => b.getAttribute('data-bar')),
      steps: barNodes.map((b) => ({
        step: b.getAttribute('data-step'),
        segments: [...b.querySelectorAll('rect[data-segment]')].map((r) => [r.getAttribute('data-segment'), r.getBBox().height]),
      })),
      titles: barNodes.map((b) => (b.querySelector('title') || {}).textContent || ''),
    };
  };
  const tables = [...section.querySelectorAll('table[data-summary]')].map((t) => ({
    summary: t.dataset.summary, part: t.dataset.part || null, thread: t.dataset.thread || null,
    rows: t.querySelectorAll('tbody tr[data-row]').length,
    names: [...t.querySelectorAll('tbody tr[data-row]')].map((tr) => tr.cells[0].textContent),
  }));
  const memory = [...section.querySelectorAll('svg[data-chart="memory"]')].map((svg) => ({
    device: svg.dataset.device,
    series: Object.fromEntries([...svg.querySelectorAll('polyline[data-series]')].map(
      (p) => [p.dataset.series, p.points.numberOfItems])),
  }));
  return {
    charts: Object.fromEntries(['step_trace', 'overview', 'op_type', 'kernel'].map((n) => [n, chart(n)])),
    memoryEmpty: !!section.querySelector('[data-empty="memory"]'),
    tables, memory, heading: (section.querySelector('h2') || {}).textContent || '',
  };
}

// ---- checks -------------------------------------------------------------------------------

function close(a, b) {
  return Math.abs(a - b) <= Math.max(1e-6, 1e-3 * Math.max(Math.abs(a), Math.abs(b)));
}

// Bar lengths are proportional to the values: one common scale for every non-zero bar.
function checkProportional(where, values, lengths) {
  const scales = values.map((v, i) => (v > 0 ? lengths[i] / v : null)).filter((s) => s !== null);
  expect(scales.every((s) => close(s, scales[0])), `${where}: bar lengths are not proportional to the values ${JSON.stringify(values)} -> ${JSON.stringify(lengths)}`);
  values.forEach((v, i) => { if (v === 0) expect(lengths[i] === 0, `${where}: bar ${i} has value 0 but length ${lengths[i]}`); });
}

function checkBarChart(where, want, got) {
  if (want.empty) {
    expect(got.missing && got.empty, `${where}: expected the "no data" line instead of a chart`);
    return;
  }
  if (!expect(!got.missing, `${where}: chart missing`)) return;
  if (!expect(got.bars === want.bars, `${where}: expected ${want.bars} bars, found ${got.bars}`)) return;
  expect(JSON.stringify(got.values) === JSON.stringify(want.values), `${where}: bar values ${JSON.stringify(got.values)} != ${JSON.stringify(want.values)}`);
  if (want.names) expect(JSON.stringify(got.names) === JSON.stringify(want.names), `${where}: bar names ${JSON.stringify(got.names)} != ${JSON.stringify(want.names)}`);
  expect(got.titles.every((t) => t.length > 0), `${where}: a bar has no tooltip`);
  checkProportional(where, want.values, got.lengths);
}

function checkStepChart(where, want, got) {
  if (want.empty) return checkBarChart(where, want, got);
  if (!expect(!got.missing, `${where}: chart missing`)) return;
  if (!expect(got.bars === want.bars, `${where}: expected ${want.bars} bars, found ${got.bars}`)) return;
  const keys = { gap: 'iteration_gap_ns', fp_bp: 'fp_bp_ns', tail: 'tail_ns' };
  const values = [], lengths = [];
  want.steps.forEach((step, i) => {
    const bar = got.steps[i];
    expect(bar.step === String(step.step), `${where}: bar ${i} is step ${bar.step}, expected ${step.step}`);
    expect(bar.segments.map((s) => s[0]).join() === 'gap,fp_bp,tail', `${where}: step ${step.step} segments ${bar.segments.map((s) => s[0])}`);
    for (const [series, height] of bar.segments) { values.push(step[keys[series]]); lengths.push(height); }
  });
  checkProportional(where, values, lengths);
}

function checkTables(where, summaries, got) {
  for (const [name, summary] of Object.entries(summaries)) {
    const tables = got.tables.filter((t) => t.summary === name);
    const want = expectedTables(name, summary);
    if (!expect(tables.length === want.length, `${where} ${name}: expected ${want.length} table(s), found ${tables.length}`)) continue;
    want.forEach((w, i) => {
      const t = tables[i];
      const label = `${where} ${name}${w.part ? '/' + w.part : ''}${w.thread ? ' thread ' + w.thread : ''}`;
      if (w.part) expect(t.part === w.part, `${label}: table part ${t.part}`);
      if (w.thread) expect(t.thread === w.thread, `${label}: table thread ${t.thread}`);
      if (!expect(t.rows === w.rows, `${label}: expected ${w.rows} rows, found ${t.rows}`)) return;
      if (w.names) expect(JSON.stringify(t.names) === JSON.stringify(w.names), `${label}: row names ${JSON.stringify(t.names)} != ${JSON.stringify(w.names)}`);
    });
  }
  const known = new Set(Object.keys(summaries));
  for (const t of got.tables) expect(known.has(t.summary), `${where}: table for ${t.summary}, which the JSON does not have`);
}

function checkMemory(where, memory, got) {
  const devices = (memory.devices || []).filter((d) => d.timeline.length > 0);
  if (devices.length === 0) { expect(got.memoryEmpty && got.memory.length === 0, `${where} memory: expected the "no data" line`); return; }
  expect(got.memory.length === devices.length, `${where} memory: expected ${devices.length} charts, found ${got.memory.length}`);
  devices.forEach((d) => {
    const chart = got.memory.find((m) => m.device === String(d.device));
    if (!expect(chart, `${where} memory: no chart for device ${d.device}`)) return;
    for (const series of ['allocated', 'reserved']) {
      expect(chart.series[series] === d.timeline.length, `${where} memory device ${d.device} ${series}: expected ${d.timeline.length} points, found ${chart.series[series]}`);
    }
  });
}

function checkTrace(trace, index, got) {
  const where = `trace ${index}`;
  if (!expect(got, `${where}: no section[data-trace="${index}"]`)) return;
  expect(got.heading.includes(trace.path), `${where}: heading "${got.heading}" does not name ${trace.path}`);
  const summaries = trace.summaries || {};
  const charts = expectedCharts(summaries);
  for (const [name, want] of Object.entries(charts)) {
    (name === 'step_trace' ? checkStepChart : checkBarChart)(`${where} ${name} chart`, want, got.charts[name]);
  }
  for (const name of ['step_trace', 'overview', 'op_type', 'kernel']) {
    if (!charts[name]) expect(got.charts[name].missing && !got.charts[name].empty, `${where}: ${name} chart drawn without its summary`);
  }
  if (summaries.memory) checkMemory(where, summaries.memory, got);
  checkTables(where, summaries, got);
}

// ---- pixels -------------------------------------------------------------------------------

// Each chart's screenshot must show its marks' own colours: the first bar (or segment) big
// enough to paint, and every line.
async function checkPainted(page) {
  const charts = await page.$$('svg[data-chart]');
  for (const chart of charts) {
    const info = await chart.evaluate((svg) => {
      const bar = [...svg.querySelectorAll('rect[data-segment], rect[data-bar]')]
        .find((m) => m.getBBox().width * m.getBBox().height >= 4);
      const marks = [...svg.querySelectorAll('polyline[data-series]')].concat(bar ? [bar] : []);
      return { name: svg.dataset.chart, background: getComputedStyle(document.body).backgroundColor, colours: marks.map((m) => {
        const style = getComputedStyle(m);
        return [m.getAttribute('data-series') || m.getAttribute('data-segment') || 'bar',
                m.tagName === 'polyline' ? style.stroke : style.fill];
      }) };
    });
    if (!expect(info.colours.length > 0, `${info.name} chart: no visible bar or line to look for`)) continue;
    await chart.scrollIntoView();
    const image = decodePng(Buffer.from(await chart.screenshot({ type: 'png' })));
    const background = (info.background.match(/\d+/g) || []).slice(0, 3).map(Number);
    for (const [mark, colour] of info.colours) {
      const rgb = (colour.match(/\d+/g) || []).slice(0, 3).map(Number);
      // A mark painted in the background colour would be found everywhere and show nothing.
      const contrast = rgb.reduce((sum, c, i) => sum + Math.abs(c - background[i]), 0);
      expect(contrast > 60, `${info.name} chart: ${mark} colour ${colour} is too close to the background ${info.background}`);
      const pixels = countColours(image, rgb);
      expect(pixels.matching >= 10, `${info.name} chart: ${mark} colour ${colour} is on ${pixels.matching} pixels of its screenshot`);
    }
  }
}

async function checkScreenshot(page, file) {
  const png = Buffer.from(await page.screenshot({ type: 'png', fullPage: true }));
  if (file) writeFileSync(file, png);
  const image = decodePng(png);
  const { distinct } = countColours(image, null);
  expect(distinct > 16, `page screenshot (${image.width}x${image.height}) has only ${distinct} colours: blank page`);
  return { width: image.width, height: image.height, distinct };
}

async function checkSelector(page, traces) {
  if (traces.length < 2) return;
  const options = await page.$$eval('#trace-select option', (os) => os.length);
  expect(options === traces.length + 1, `trace selector: ${options} options for ${traces.length} traces`);
  await page.select('#trace-select', '1');
  const hidden = await page.$$eval('section[data-trace]', (ss) => ss.map((s) => s.hidden));
  expect(JSON.stringify(hidden) === JSON.stringify(traces.map((_, i) => i !== 1)), `trace selector: choosing trace 1 left hidden=${JSON.stringify(hidden)}`);
  await page.select('#trace-select', 'all');
}

// ---- main ---------------------------------------------------------------------------------

async function main() {
  const args = parseArgs(process.argv);
  const report = JSON.parse(readFileSync(args.json, 'utf8'));
  const puppeteer = loadPuppeteer(args.nodeModules);
  // --no-sandbox: Chromium's sandbox needs user namespaces or a non-root user, which test
  // containers often lack; the page is our own local file and the network is cut below.
  const browser = await puppeteer.launch({ executablePath: args.chromium, headless: true,
                                           args: ['--no-sandbox', '--headless=new'] });
  const outside = [], errors = [];
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    await page.setRequestInterception(true);
    page.on('request', (r) => (r.url().startsWith('file:') ? r.continue() : (outside.push(r.url()), r.abort())));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
    await page.goto(pathToFileURL(path.resolve(args.html)).href, { waitUntil: 'load' });
    await page.waitForSelector('body[data-rendered]', { timeout: 10000 });
    expect(await page.$eval('body', (b) => b.dataset.rendered) === 'true', 'the page says it could not be drawn');
    expect(await page.evaluate(() => window.__pwned === undefined), 'a name in the data ran as script');
    const traces = report.traces || [];
    expect(await page.$$eval('section[data-trace]', (s) => s.length) === traces.length, 'one section per trace');
    for (let i = 0; i < traces.length; i++) checkTrace(traces[i], i, await page.evaluate(readSection, i));
    await checkSelector(page, traces);
    await checkPainted(page);
    const shot = await checkScreenshot(page, args.screenshot);
    expect(outside.length === 0, `${outside.length} request(s) left the page's file: ${outside.join(' ')}`);
    expect(errors.length === 0, `${errors.length} console/page error(s): ${errors.join(' | ')}`);
    return shot;
  } finally {
    await browser.close();
  }
}

main().then((shot) => {
  for (const f of failures) console.log(`FAIL: ${f}`);
  if (failures.length) { console.log(`html check: ${failures.length} of ${checks} checks failed`); process.exit(1); }
  console.log(`html check: ${checks} checks passed (screenshot ${shot.width}x${shot.height}, ${shot.distinct} colours, 0 outside requests, 0 errors)`);
}, (err) => { console.log(`FAIL: ${err.stack || err}`); process.exit(1); });

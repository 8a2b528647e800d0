// Opens a trace2html page (Chromium's legacy trace viewer, catapult) in headless Chromium and
// prints what its importer made of the trace's flows, as one JSON line:
//   {"warnings": N, "flow_warnings": N, "flows": N, "first": [...]}
//
//   node catapult_flows.mjs PAGE.html NODE_MODULES_DIR CHROMIUM
//
// trace2html's page keeps its timeline view in the global `g_timelineViewEl` (a `let`, so not a
// window property); its model lists the importer's warnings and the arrows it kept.
import { createRequire } from 'node:module';
import path from 'node:path';

const [, , page, nodeModules, chromium] = process.argv;
const puppeteer = createRequire(path.resolve(nodeModules) + path.sep)('puppeteer-core');
const browser = await puppeteer.launch({ executablePath: chromium, headless: true,
                                         args: ['--no-sandbox', '--allow-file-access-from-files'] });
try {
  const tab = await browser.newPage();
  await tab.goto('file://' + path.resolve(page), { waitUntil: 'load', timeout: 120000 });
  await tab.waitForFunction(() => typeof g_timelineViewEl !== 'undefined' && g_timelineViewEl.model,  // eslint-disable-line no-undef
                            { timeout: 120000 });
  const got = await tab.evaluate(() => {
    const model = g_timelineViewEl.model;  // eslint-disable-line no-undef
    const warnings = model.importWarnings.map(w => `${w.type}: ${w.message}`);
    const flow = warnings.filter(w => w.startsWith('flow_'));
    return { warnings: warnings.length, flow_warnings: flow.length, flows: model.flowEvents.length, first: warnings.slice(0, 3) };
  });
  console.log(JSON.stringify(got));
} finally {
  await browser.close();
}

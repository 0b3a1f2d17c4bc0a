// Browser benchmark of an experiment's report page: a small offline
// experiment is started from the wizard (4 methods, 20 questions, 5 trials)
// and, once done, its report page is opened 5 times in a fresh context
// (nothing cached): time to first contentful paint (the server-rendered
// report) and to hydration (the WASM has taken over: body[data-hydrated]),
// with the page's, the WASM modules' and the JS's transfer sizes.
// Usage: node end2end/bench/report-page.js ASSAY_BIN
const { serve, browser: launch, markHydration } = require('./serve');
const fs = require('fs');
const os = require('os');
const path = require('path');

(async () => {
  const bin = process.argv[2];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'assay-report-bench-'));
  const { base, server } = await serve(bin, path.join(dir, 'r.db'), 3392);
  try {
    const browser = await launch();
    const setup = await browser.newPage();
    await setup.goto(`${base}/experiments/new`);
    await setup.waitForSelector('body[data-hydrated="true"]');
    for (const [id, v] of [['#x-node', '4'], ['#x-edge', '4'], ['#x-subgraph', '4'], ['#x-users', '2'], ['#x-tasks', '2'],
      ['#x-per-task', '2'], ['#x-trials', '5'], ['#x-repeats', '1']]) {
      await setup.fill(id, v);
      await setup.dispatchEvent(id, 'change');
    }
    await setup.waitForTimeout(1000);
    await setup.click('#start-experiment');
    await setup.waitForURL(/\/experiments\/\d+$/);
    await setup.waitForSelector('#corpus-stats', { timeout: 600_000 });
    const url = setup.url();
    const runs = [];
    for (let i = 0; i < 5; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await markHydration(page);
      await page.goto(url);
      await page.waitForFunction(() => window.__hydrated !== undefined, null, { timeout: 60_000 });
      runs.push(await page.evaluate(() => {
        const paint = performance.getEntriesByName('first-contentful-paint')[0];
        const nav = performance.getEntriesByType('navigation')[0];
        // The main module and the page's lazily loaded modules (scripts/build
        // splits the WASM per page), and the JS that loads them.
        const all = performance.getEntriesByType('resource');
        const sum = (list, k) => list.reduce((s, r) => s + r[k], 0);
        const wasm = all.filter((r) => r.name.endsWith('.wasm'));
        const js = all.filter((r) => r.name.endsWith('.js'));
        return {
          fcp: paint ? paint.startTime : NaN,
          hydrated: window.__hydrated,
          html: nav.transferSize,
          htmlBody: nav.decodedBodySize,
          wasmFiles: wasm.length,
          wasm: sum(wasm, 'transferSize'),
          wasmBody: sum(wasm, 'decodedBodySize'),
          js: sum(js, 'transferSize'),
          jsBody: sum(js, 'decodedBodySize'),
          // When the main module had arrived, when the page's modules were
          // first asked for, and when the last of them had arrived.
          mainEnd: Math.max(...wasm.filter((r) => r.name.endsWith('/assay_bg.wasm')).map((r) => r.responseEnd)),
          pageStart: Math.min(...wasm.filter((r) => !r.name.endsWith('/assay_bg.wasm')).map((r) => r.startTime)),
          pageEnd: Math.max(...wasm.map((r) => r.responseEnd)),
        };
      }));
      await context.close();
    }
    const median = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
    console.log(`experiment report page (${url}), 5 cold loads, medians:`);
    console.log(`  first contentful paint ${median('fcp').toFixed(0)} ms; hydrated ${median('hydrated').toFixed(0)} ms`);
    console.log(`  main module arrived ${median('mainEnd').toFixed(0)} ms; page's modules asked for ${median('pageStart').toFixed(0)} ms, arrived ${median('pageEnd').toFixed(0)} ms`);
    const kb = (k) => (median(k) / 1024).toFixed(0);
    console.log(`  HTML ${kb('htmlBody')} KB (${kb('html')} KB sent); WASM ${median('wasmFiles')} files, ${kb('wasmBody')} KB (${kb('wasm')} KB sent); JS ${kb('jsBody')} KB (${kb('js')} KB sent)`);
    await browser.close();
  } finally {
    server.kill();
  }
})();

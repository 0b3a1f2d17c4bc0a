// Browser benchmark of a live page's end (#39): a small offline experiment
// started from the wizard, its page left open; the time from the run's end
// (the experiment's finished_at, written by the server) to the report on
// the page (#corpus-stats, drawn without a reload), and the requests the
// page sent while it waited. Then the page is left open 30 s more: the
// requests it sends once the run is over (none expected). 3 runs.
// Usage: node end2end/bench/live.js ASSAY_BIN
const { serve, browser: launch } = require('./serve');
const fs = require('fs');
const os = require('os');
const path = require('path');

(async () => {
  const bin = process.argv[2];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'assay-live-bench-'));
  const { base, server } = await serve(bin, path.join(dir, 'l.db'), 3394);
  try {
    const browser = await launch();
    for (let run = 1; run <= 3; run++) {
      const page = await browser.newPage();
      const requests = [];
      page.on('request', (r) => { if (r.url().includes('/api/')) requests.push({ at: Date.now(), url: r.url() }); });
      await page.goto(`${base}/experiments/new`);
      await page.waitForSelector('body[data-hydrated="true"]');
      await page.fill('#x-name', `Live bench ${run}`);
      await page.dispatchEvent('#x-name', 'change');
      for (const [id, v] of [['#x-node', '6'], ['#x-edge', '6'], ['#x-subgraph', '2'], ['#x-trials', '5'], ['#x-repeats', '1']]) {
        await page.fill(id, v);
        await page.dispatchEvent(id, 'change');
      }
      await page.uncheck('#x-summary-q');
      await page.waitForTimeout(1000);
      await page.click('#start-experiment');
      await page.waitForURL(/\/experiments\/\d+$/);
      await page.waitForSelector('body[data-hydrated="true"]');
      await page.evaluate(() => {
        new MutationObserver((_, observer) => {
          if (document.querySelector('#corpus-stats')) {
            window.__report = Date.now();
            observer.disconnect();
          }
        }).observe(document.body, { childList: true, subtree: true });
      });
      await page.waitForFunction(() => window.__report !== undefined, null, { timeout: 600_000 });
      const shown = await page.evaluate(() => window.__report);
      const id = page.url().split('/').pop();
      const report = await (await page.request.get(`${base}/api/experiments/${id}/experiment.json`)).json();
      const finished = Date.parse(report.finished_at);
      const during = requests.filter((r) => r.at <= shown).length;
      const before = requests.length;
      await page.waitForTimeout(30_000);
      const after = requests.length - before;
      console.log(`run ${run}: report shown ${shown - finished} ms after the run's end; ` +
        `${during} API requests while it ran; ${after} in the 30 s after`);
      await page.close();
    }
    await browser.close();
  } finally {
    server.kill();
  }
})();

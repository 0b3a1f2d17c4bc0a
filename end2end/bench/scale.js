// Browser benchmark at the papers' sizes (#39): every page of a project of
// 5,040 questions × 4 answer sets with full contexts (fixtures/large-project.js,
// made once into the given database when it has no such project), opened
// in a fresh context 3 times at 1280 × 900: the HTML's bytes, the time to
// the first byte, and to hydration (body[data-hydrated]). Then 20 tabs left
// open on the project's pages with nothing running, and the server's CPU
// share over 30 s (from /proc/PID/stat), and the same with the evaluation
// page of a running job open in 20 tabs.
//
// Usage: node end2end/bench/scale.js ASSAY_BIN [DB]
//   (DB defaults to a new file under /tmp; pass one to reuse its project)
const { serve, browser: launch, markHydration } = require('./serve');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { buildLargeProject, largeProjectUrls } = require('../fixtures/large-project');

const NAME = 'Papers-size project';

function cpuTicks(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime, after the state field
}

async function cpuShare(pid, seconds) {
  const hz = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
  const before = cpuTicks(pid);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return (cpuTicks(pid) - before) / hz / seconds;
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };

(async () => {
  const bin = process.argv[2];
  const db = process.argv[3] || path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'assay-scale-')), 'scale.db');
  const ids = fs.existsSync(`${db}.ids.json`) ? JSON.parse(fs.readFileSync(`${db}.ids.json`)) : (() => {
    const made = buildLargeProject(bin, db, NAME, (m) => console.error(`fixture: ${m}`));
    fs.writeFileSync(`${db}.ids.json`, JSON.stringify(made));
    return made;
  })();
  const { base, server } = await serve(bin, db, 3393);
  try {
    const browser = await launch();
    const probe = await browser.newPage();
    await probe.goto(`${base}/projects/${ids.project}/corpus`);
    const doc = (await probe.locator('a[href*="/documents/"]').first().getAttribute('href')).split('/').pop();
    await probe.close();
    const urls = largeProjectUrls(ids, doc);
    console.log('page\tHTML KB\tfirst byte ms\thydrated ms (median of 3)');
    for (const url of urls) {
      const bytes = [], ttfb = [], hydrated = [];
      for (let i = 0; i < 3; i++) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        const page = await context.newPage();
        await markHydration(page);
        await page.goto(base + url);
        await page.waitForFunction(() => window.__hydrated !== undefined, null, { timeout: 120_000 });
        const m = await page.evaluate(() => {
          const nav = performance.getEntriesByType('navigation')[0];
          return { bytes: nav.decodedBodySize, ttfb: nav.responseStart, hydrated: window.__hydrated };
        });
        bytes.push(m.bytes); ttfb.push(m.ttfb); hydrated.push(m.hydrated);
        await context.close();
      }
      console.log(`${url}\t${(median(bytes) / 1024).toFixed(1)}\t${median(ttfb).toFixed(0)}\t${median(hydrated).toFixed(0)}`);
    }

    // 20 idle tabs: the project's pages, nothing running.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const tabs = [];
    for (let i = 0; i < 20; i++) {
      const page = await context.newPage();
      await page.goto(base + urls[i % urls.length]);
      await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120_000 });
      tabs.push(page);
    }
    await new Promise((r) => setTimeout(r, 3000));
    const idle = await cpuShare(server.pid, 30);
    console.log(`20 idle tabs: server CPU ${(idle * 100).toFixed(2)} % of one core over 30 s`);
    await context.close();
    await browser.close();
  } finally {
    server.kill();
  }
})();

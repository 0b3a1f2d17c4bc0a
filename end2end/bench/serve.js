// What the browser benchmarks share: `assay serve` (no login) on a SQLite
// file, started and awaited, and headless Chromium launched as the tests do.
const { chromium } = require('playwright-core');
const { spawn } = require('child_process');

/** Starts `bin serve` on `db` at `port`; resolves once it answers, with its base URL and process. */
async function serve(bin, db, port, env = { ...process.env, ASSAY_LLM_PROVIDER: '' }) {
  const base = `http://127.0.0.1:${port}`;
  const server = spawn(bin, ['--db', db, 'serve', '--no-login', '--addr', `127.0.0.1:${port}`], { env, stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try { if ((await fetch(base + '/')).ok) break; } catch (_) { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { base, server };
}

/** Debian's Chromium, headless, with the tests' flags. */
function browser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
  });
}

/** Records in `window.__hydrated` when the page has hydrated (body[data-hydrated]). */
async function markHydration(page) {
  await page.addInitScript(() => {
    new MutationObserver((_, observer) => {
      if (document.body && document.body.dataset.hydrated === 'true') {
        window.__hydrated = performance.now();
        observer.disconnect();
      }
    }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-hydrated'] });
  });
}

module.exports = { serve, browser, markHydration };

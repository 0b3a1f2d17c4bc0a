const path = require('path');
const { expect } = require('@playwright/test');

/** The read-only corpora beside the repository (../shared/corpora). */
const corpora = process.env.ASSAY_CORPORA || path.resolve(__dirname, '../../../shared/corpora');
const corpus = (name) => path.join(corpora, name);

/**
 * Opens a page and waits until the WASM has hydrated it. A page that does
 * not hydrate fails with what the browser said meanwhile (errors, failed
 * requests), not only with the missing attribute.
 */
async function openHydrated(page, url) {
  const said = [];
  const onConsole = (m) => { if (m.type() === 'error' || m.type() === 'warning') said.push(`console ${m.type()}: ${m.text()}`); };
  const onError = (e) => said.push(`page error: ${e.message}`);
  const onFailed = (r) => said.push(`request failed: ${r.url()} (${r.failure()?.errorText})`);
  page.on('console', onConsole);
  page.on('pageerror', onError);
  page.on('requestfailed', onFailed);
  const started = Date.now();
  let response = null;
  try {
    response = await page.goto(url);
    await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  } catch (e) {
    const pending = await page.evaluate(() => performance.getEntriesByType('resource')
      .map((r) => `${r.name.split('/').pop()} ${Math.round(r.startTime)}+${Math.round(r.duration)} ms`)).catch(() => []);
    const headers = response ? Object.entries(await response.allHeaders()).map(([k, v]) => `${k}: ${v.slice(0, 120)}`) : [];
    e.message += `\n${url} not hydrated after ${Date.now() - started} ms; its response: ${response?.status()} ${response?.fromServiceWorker() ? '(service worker)' : ''}` +
      `\n  ${headers.join('\n  ')}\nthe browser said:\n  ${said.slice(0, 12).join('\n  ') || '(nothing)'}${said.length > 12 ? `\n  … and ${said.length - 12} more` : ''}` +
      `\nresources (${pending.length}):\n  ${pending.slice(0, 8).join('\n  ')}`;
    throw e;
  } finally {
    page.off('console', onConsole);
    page.off('pageerror', onError);
    page.off('requestfailed', onFailed);
  }
}

/** Creates a project through the home page form; lands on its corpus page. */
async function createProject(page, name) {
  await openHydrated(page, '/');
  await page.getByLabel('New project').fill(name);
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/corpus$/);
  await expect(page.locator('.project-name')).toHaveText(name);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
}

/** Uploads files through the file picker and waits for the server's report. */
async function upload(page, files) {
  await page.locator('#upload-input').setInputFiles(files);
  const report = page.locator('.report');
  await expect(report).toBeVisible({ timeout: 60_000 });
  return report;
}

const int = (s) => Number(String(s).replace(/,/g, ''));

// The groups of pages whose WASM modules a page fetched, sorted
// (scripts/build splits the WASM into one module per group: app/src/lib.rs).
async function wasmGroups(page) {
  const names = await page.evaluate(() => performance.getEntriesByType('resource')
    .map((r) => r.name.split('/').pop()));
  return names.map((n) => /^split_(\w+?)_pages_\d+\.wasm$/.exec(n)).filter(Boolean).map((m) => m[1]).sort();
}

// How the browser came to fetch a group's module: ['link'] when the page's
// HTML named it for preloading (app/src/ssr/preload.rs) and the loader's fetch
// reused that download; a second entry would be a second download.
async function wasmInitiators(page, group) {
  return page.evaluate((g) => performance.getEntriesByType('resource')
    .filter((r) => new RegExp(`/split_${g}_pages_\\d+\\.wasm$`).test(r.name)).map((r) => r.initiatorType), group);
}

/**
 * How far the page reaches past a `width`-wide screen: the document's
 * scroll width, and the elements past the right edge that are not inside a
 * box that scrolls on its own. (`width`, not the window's: a phone's layout
 * viewport widens to fit what overflows.)
 */
async function overflow(page, width = 390) {
  return page.evaluate((width) => {
    const scrolls = (el) => {
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        const s = getComputedStyle(p);
        if (['auto', 'scroll', 'hidden'].includes(s.overflowX) && p.getBoundingClientRect().right <= width + 1) return true;
      }
      return false;
    };
    const wide = [];
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > width + 1 && !scrolls(el)) {
        wide.push(`${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}${el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : ''} → ${Math.round(r.right)} px`);
      }
    }
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth: width, wide: wide.slice(0, 8) };
  }, width);
}

module.exports = { corpus, openHydrated, createProject, upload, int, wasmGroups, wasmInitiators, overflow };

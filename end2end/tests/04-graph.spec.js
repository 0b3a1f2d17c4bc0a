// The Graph page: build the sample corpus's graph offline, read its
// statistics, find an entity, click it on the canvas, read its source text;
// filters, focus and highlighting; and a 5,000-node graph that renders and
// responds.
const { test, expect } = require('@playwright/test');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { createProject, openHydrated, int, wasmGroups, wasmInitiators } = require('./helpers');
const { syntheticGraph } = require('../fixtures/synthetic-graph');

test.describe.configure({ mode: 'serial' });

const canvas = (page) => page.locator('#graph-canvas');
const attr = async (page, name) => canvas(page).getAttribute(name);

/** Clicks the middle of the canvas (where a searched entity is centred). */
async function clickCentre(page) {
  await canvas(page).scrollIntoViewIfNeeded();
  const box = await canvas(page).boundingBox();
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
}

/** Waits for one more frame than `before`. */
async function nextFrame(page, before) {
  await expect.poll(async () => int(await attr(page, 'data-frames'))).toBeGreaterThan(before);
}

let graphUrl;

test('build the sample graph offline, find an entity, click it, read its source', async ({ page }) => {
  await createProject(page, 'Graph demo');
  await page.getByRole('button', { name: 'Load the sample corpus' }).click();
  await expect(page.locator('#total-chunks')).toHaveText('5');
  await page.getByRole('link', { name: 'Graph' }).click();
  await expect(page).toHaveURL(/\/graph$/);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await expect(page.locator('#no-graph')).toContainText('No graph yet');
  await expect(page.locator('.build-panel .llm-line')).toContainText('offline (no LLM)');
  // The price before the run (#39): 5 chunks × (1 + 1 gleaning pass), free offline.
  const price = page.locator('#graph-price');
  await expect(price.locator('.plan-stages tbody tr').first().locator('td').nth(1)).toHaveText('10');
  await expect(price.locator('.price-total')).toContainText('free');

  await page.locator('#build-graph').click();
  // The job runs; the page follows it and shows the graph when it is done.
  await expect(page.locator('#graph-stats')).toBeVisible({ timeout: 60_000 });
  graphUrl = page.url();
  const stat = (label) => page.locator('#graph-stats div').filter({ hasText: label }).locator('dd');
  expect(int(await stat('Nodes').textContent())).toBeGreaterThan(50);
  expect(int(await stat('Edges').textContent())).toBeGreaterThan(100);
  await expect(page.locator('#graph-provenance')).toContainText('the offline provider');
  await expect(page.locator('#graph-provenance')).toContainText('not by a language model');
  await expect(page.locator('#top-entities li').first()).toContainText('Saltmere');
  await expect(page.locator('#degree-chart rect.bar').first()).toBeAttached();
  await expect(canvas(page)).toHaveAttribute('data-frames', /\d+/);
  const total = int(await stat('Nodes').textContent());
  await expect(canvas(page)).toHaveAttribute('data-visible', String(total));
  // The graph downloads as JSON and GraphML, every node in each (#24).
  const json = await page.request.get(await page.locator('#graph-downloads a', { hasText: 'JSON' }).getAttribute('href'));
  expect(json.headers()['content-disposition']).toMatch(/attachment; filename="project-\d+-graph\.json"/);
  expect((await json.json()).nodes).toHaveLength(total);
  const graphml = await page.request.get(await page.locator('#graph-downloads a', { hasText: 'GraphML' }).getAttribute('href'));
  expect((await graphml.text()).match(/<node /g)).toHaveLength(total);

  // Search with suggestions; choosing one selects and centres the entity.
  await page.locator('#graph-search').fill('salt gu');
  // Names starting with the query come first.
  const suggestion = page.locator('.suggestion').first();
  await expect(suggestion).toContainText('Salt Guild');
  await suggestion.click();
  const panel = page.locator('#graph-detail');
  await expect(panel.locator('.detail-title')).toHaveText('Salt Guild');
  await expect(panel.locator('.detail-meta')).toContainText('organization');
  await expect(panel.locator('.source-chunk').first()).toBeVisible();
  await expect(panel.locator('.source-chunk mark').first()).toHaveText(/salt guild/i);
  const guildId = await attr(page, 'data-selected');
  expect(guildId).not.toBe('');

  // Clicking an empty corner clears the selection; clicking the centred
  // Salt Guild on the canvas selects it again.
  await canvas(page).scrollIntoViewIfNeeded();
  const box = await canvas(page).boundingBox();
  await page.mouse.click(box.x + 4, box.y + 4);
  await expect(panel).toContainText('Click a node or an edge');
  await expect(canvas(page)).toHaveAttribute('data-selected', '');
  await expect(page).not.toHaveURL(/[?&]node=/);
  await clickCentre(page);
  await expect(panel.locator('.detail-title')).toHaveText('Salt Guild');
  await expect(canvas(page)).toHaveAttribute('data-selected', guildId);
  // The selection is in the address, so a copied link opens on it (#39).
  await expect(page).toHaveURL(new RegExp(`[?&]node=${guildId}(&|$)`));
  // A neighbour in the panel is one click away, and comes to the centre.
  const neighbour = (await panel.locator('button.neighbour').first().textContent()).trim();
  await panel.locator('button.neighbour').first().click();
  await expect(panel.locator('.detail-title')).toHaveText(neighbour);
  await page.mouse.click(box.x + 4, box.y + 4);
  await clickCentre(page);
  await expect(panel.locator('.detail-title')).toHaveText(neighbour);
  await page.locator('#graph-search').fill('Salt Guild');
  await page.locator('.suggestion').first().click();
  await expect(panel.locator('.detail-title')).toHaveText('Salt Guild');
  // Its source chunk links to the document it came from.
  await expect(panel.locator('.source-chunk figcaption a').first()).toHaveAttribute('href', /\/documents\/\d+$/);

  // Focus on its 1-hop neighbourhood, then show everything again.
  const degree = await panel.locator('button.neighbour').count();
  await panel.locator('#focus-node').click();
  await expect(canvas(page)).toHaveAttribute('data-visible', String(degree + 1));
  await panel.locator('#clear-focus').click();
  await expect(canvas(page)).toHaveAttribute('data-visible', String(total));

  // Filters: a minimum degree, a hidden type.
  await page.locator('#min-degree').fill('5');
  await expect.poll(async () => int(await attr(page, 'data-visible'))).toBeLessThan(total);
  await page.locator('#min-degree').fill('0');
  await expect(canvas(page)).toHaveAttribute('data-visible', String(total));
  await page.locator('#graph-legend input[data-type="person"]').uncheck();
  await expect.poll(async () => int(await attr(page, 'data-visible'))).toBeLessThan(total);

});

test('share the graph explorer read-only: it works through the link, links nowhere else, and 404s when withdrawn', async ({ page, browser }) => {
  await openHydrated(page, graphUrl);
  await page.locator('#create-share').click();
  const link = page.locator('#share-link a');
  await expect(link).toHaveAttribute('href', /^http:\/\/127\.0\.0\.1:\d+\/share\/[0-9a-f]{48}$/);
  const sharePath = await link.getAttribute('href');

  const guest = await (await browser.newContext({ storageState: { cookies: [], origins: [] } })).newPage();
  await openHydrated(guest, sharePath);
  await expect(guest.locator('#graph-stats')).toBeVisible();
  // The shared page's frame and the graph's group of the WASM, no report's.
  expect(await wasmGroups(guest)).toEqual(['graph', 'share']);
  // The server named both groups' modules in the page, the graph's once it
  // knew what the link shares.
  expect(await wasmInitiators(guest, 'graph')).toEqual(['link']);
  expect(await wasmInitiators(guest, 'share')).toEqual(['link']);
  await expect(canvas(guest)).toHaveAttribute('data-frames', /\d+/);
  await guest.locator('#graph-search').fill('Salt Guild');
  await guest.locator('.suggestion').first().click();
  const panel = guest.locator('#graph-detail');
  await expect(panel.locator('.detail-title')).toHaveText('Salt Guild');
  await expect(panel.locator('.source-chunk mark').first()).toHaveText(/salt guild/i);
  // The source text names its document but links to nothing of the project.
  await expect(panel.locator('.source-chunk figcaption a')).toHaveCount(0);
  await expect(guest.locator('a[href*="/projects/"]')).toHaveCount(0);
  await expect(guest.locator('#build-graph')).toHaveCount(0);
  // A top entity opens the shared explorer on it.
  await guest.locator('#top-entities a').first().click();
  await expect(guest).toHaveURL(/\/share\/[0-9a-f]{48}\?node=\d+$/);
  await expect(panel.locator('.detail-title')).not.toBeEmpty();

  await page.locator('#share-panel button', { hasText: 'Withdraw' }).click();
  await expect(page.locator('#share-panel')).toContainText('withdrawn');
  const gone = await guest.goto(sharePath);
  expect(gone.status()).toBe(404);
});

test('the URL highlights nodes and selects one', async ({ page }) => {
  await openHydrated(page, graphUrl);
  await page.locator('#graph-search').fill('Saltmere');
  await page.locator('.suggestion').first().click();
  const id = await attr(page, 'data-selected');
  await openHydrated(page, `${graphUrl}?highlight=${id},999999&node=${id}`);
  await expect(canvas(page)).toHaveAttribute('data-emphasised', '1');
  await expect(canvas(page)).toHaveAttribute('data-selected', id);
  await expect(page.locator('#graph-detail .detail-title')).toHaveText('Saltmere');
});

test('a 5,000-node, 20,000-edge graph renders and responds; a lower limit shows the top nodes', async ({ page }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'assay-graph-'));
  const file = path.join(dir, 'graph5k.json');
  fs.writeFileSync(file, JSON.stringify(syntheticGraph(5000, 20000)));
  const bin = process.env.ASSAY_BIN || path.resolve(__dirname, '../../target/debug/assay');
  const db = ['--db', process.env.ASSAY_E2E_DB];
  const project = JSON.parse(execFileSync(bin, [...db, '--json', 'project', 'create', 'Synthetic 5k']));
  const imported = JSON.parse(execFileSync(bin, [...db, '--json', 'graph', 'import', 'Synthetic 5k', file]));
  expect(imported.nodes).toBe(5000);
  expect(imported.edges).toBe(20000);

  await openHydrated(page, `/projects/${project.id}/graph`);
  await expect(page.locator('#graph-shown')).toHaveText('5,000 nodes, 20,000 edges.');
  await expect(canvas(page)).toHaveAttribute('data-visible', '5000');
  await expect(page.locator('#graph-provenance')).toContainText('an imported file');

  // Zoom and pan redraw; the page stays responsive.
  await canvas(page).scrollIntoViewIfNeeded();
  const box = await canvas(page).boundingBox();
  let frames = int(await attr(page, 'data-frames'));
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -600);
  await nextFrame(page, frames);
  frames = int(await attr(page, 'data-frames'));
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) await page.mouse.move(box.x + box.width / 2 + i * 15, box.y + box.height / 2 + i * 5);
  await page.mouse.up();
  await nextFrame(page, frames);

  // Find an entity and click it on the canvas.
  await page.locator('#graph-search').fill('Entity 04242');
  const id = await page.locator('.suggestion').first().getAttribute('data-node');
  await page.locator('.suggestion').first().click();
  await expect(page.locator('#graph-detail .detail-title')).toHaveText('Entity 04242');
  await expect(canvas(page)).toHaveAttribute('data-selected', id);
  const neighbour = (await page.locator('#graph-detail button.neighbour').first().textContent()).trim();
  await page.locator('#graph-detail button.neighbour').first().click();
  await expect(page.locator('#graph-detail .detail-title')).toHaveText(neighbour);
  await page.mouse.click(box.x + 4, box.y + 4);
  // The neighbour is now in the middle; a click there selects it on the canvas.
  await page.locator('#graph-search').fill('Entity 04242');
  await page.locator('.suggestion').first().click();
  await expect(page.locator('#graph-detail .detail-title')).toHaveText('Entity 04242');
  await clickCentre(page);
  await expect(canvas(page)).toHaveAttribute('data-selected', id);
  await expect(page.locator('#graph-detail .detail-title')).toHaveText('Entity 04242');

  // With a lower limit, the highest-degree nodes and a note.
  await openHydrated(page, `/projects/${project.id}/graph?limit=1000`);
  await expect(page.locator('#graph-shown')).toContainText('Showing the 1,000 highest-degree nodes of 5,000');
  await expect(canvas(page)).toHaveAttribute('data-visible', '1000');
});

/** A zip of a folder of the peers' fixtures (engine/tests/fixtures/peers), made with Python's zipfile. */
function zipFixture(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'index-'));
  const out = path.join(dir, `${name}.zip`);
  const src = path.join(__dirname, '../../engine/tests/fixtures/peers', name);
  execFileSync('python3', ['-c', `
import os, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for f in sorted(os.listdir(src)):
        z.write(os.path.join(src, f), "rag_storage/" + f)
`, src, out]);
  return out;
}

test('import a LightRAG index from a zip on the Graph page: counts, provenance, source text', async ({ page }) => {
  await createProject(page, 'Their LightRAG');
  await page.getByRole('link', { name: 'Graph' }).click();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await expect(page.locator('#no-graph')).toContainText('No graph yet');
  await page.getByText('Or import a graph another system built').click();
  const form = page.locator('#import-index-form');
  // nano-graphrag's folder offered as LightRAG's: refused, saying which it is.
  await form.locator('select[name="format"]').selectOption('lightrag');
  await form.locator('input[type="file"]').setInputFiles(zipFixture('nano-graphrag'));
  await form.getByRole('button', { name: 'Import' }).click();
  await expect(page.locator('#import-error')).toContainText("looks like nano-graphrag's");
  await expect(page.locator('#no-graph')).toBeVisible();

  await expect(form).toBeVisible();
  await form.locator('select[name="format"]').selectOption('lightrag');
  await form.locator('input[type="file"]').setInputFiles(zipFixture('lightrag'));
  await form.getByRole('button', { name: 'Import' }).click();
  await expect(page).toHaveURL(/imported=1/);
  // The form's answer is a new page: search once it has hydrated and drawn the graph.
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await expect(canvas(page)).toHaveAttribute('data-visible', '66');
  await expect(page.locator('#graph-provenance')).toContainText('Imported from a LightRAG index');
  await expect(page.locator('#graph-provenance')).toContainText('66 entities → 66 nodes, 60 relations → 60 edges, 29 chunks of 2 documents');
  await expect(page.locator('#graph-stats')).toContainText('66');
  await page.locator('#graph-search').fill('Scrooge');
  await page.locator('.suggestion').first().click();
  const panel = page.locator('#graph-detail');
  await expect(panel.locator('.detail-title')).toHaveText('Scrooge');
  await expect(panel.locator('.source-chunk mark').first()).toHaveText(/scrooge/i);
  await expect(panel.locator('.source-chunk figcaption a').first()).toHaveAttribute('href', /\/documents\/\d+$/);
  // The corpus came with it: their two documents, their 29 chunks.
  await page.getByRole('link', { name: 'Corpus' }).click();
  await expect(page.locator('#total-chunks')).toHaveText('29');
});

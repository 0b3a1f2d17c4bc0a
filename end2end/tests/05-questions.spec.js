// The Questions page: generate graph questions offline for the sample
// corpus, open one's provenance (source text, its subgraph highlighted in
// the graph), edit, delete and add questions, export and import a set.
const { test, expect } = require('@playwright/test');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { createProject, openHydrated } = require('./helpers');
const { graphragBenchPair } = require('../fixtures/benchmark-files');

test.describe.configure({ mode: 'serial' });

let questionsUrl;

test('generate graph questions offline, open a subgraph question\'s provenance and see it in the graph', async ({ page }) => {
  await createProject(page, 'Questions demo');
  await page.getByRole('button', { name: 'Load the sample corpus' }).click();
  await expect(page.locator('#total-chunks')).toHaveText('5');
  await page.getByRole('link', { name: 'Graph' }).click();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await page.locator('#build-graph').click();
  await expect(page.locator('#graph-stats')).toBeVisible({ timeout: 60_000 });

  await page.getByRole('link', { name: 'Questions' }).click();
  await expect(page).toHaveURL(/\/questions$/);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  questionsUrl = page.url();
  await expect(page.locator('#no-sets')).toBeVisible();
  const form = page.locator('#generate-form');
  await expect(page.locator('.build-panel .llm-line')).toContainText('offline (no LLM)');
  await form.locator('input[name="req[node]"]').fill('4');
  await form.locator('input[name="req[edge]"]').fill('3');
  await form.locator('input[name="req[subgraph]"]').fill('2');
  await form.locator('input[name="req[min_hops]"]').fill('20');
  // The price before the run (#39): 9 questions + each of the 5 chunks
  // summarised once for the subgraphs.
  const price = page.locator('#graph-questions-price');
  await expect(price.locator('.plan-stages tbody tr').first().locator('td').nth(1)).toHaveText('14');
  await page.locator('#generate-questions').click();

  const row = page.locator('table.sets tbody tr').first();
  await expect(row).toContainText('4 node · 3 edge · 2 subgraph', { timeout: 60_000 });
  await expect(row).toContainText('offline provider: template questions, not written by a language model');
  const questions = page.locator('table.questions tbody tr[data-question]');
  await expect(questions).toHaveCount(9);

  // Filter by level and by text.
  await page.locator('#level-filter').selectOption('subgraph');
  await expect(questions).toHaveCount(2);
  await page.locator('#level-filter').selectOption('');
  await page.locator('#question-search').fill('connected to');
  await expect(questions).toHaveCount(3);
  await page.locator('#question-search').fill('');

  // A subgraph question's provenance: its entities, source text, and the graph.
  const sub = questions.filter({ has: page.locator('.badge', { hasText: 'subgraph' }) }).first();
  await sub.getByRole('button', { name: 'Provenance' }).click();
  const prov = page.locator('.provenance');
  await expect(prov).toContainText('a walk of');
  // Which passages the LLM was given is recorded: a subgraph is given all of its source chunks.
  await expect(prov.locator('.context-note')).toHaveText(/^Passages given to the offline templates: (\d+) of the \1 source chunks? \(chunks [\d, …]+\), drawn across all of them\.$/);
  await expect(prov.locator('.source-chunk').first()).toBeVisible();
  await expect(prov.locator('.source-chunk mark').first()).toBeVisible();
  const chips = await prov.locator('.chip').count();
  expect(chips).toBeGreaterThan(5);
  // Each source chunk links to its place among its document's chunks (#24).
  const chunkLink = prov.locator('.source-chunk a.chunk-link').first();
  const chunkHref = await chunkLink.getAttribute('href');
  const chunkId = (await chunkLink.textContent()).replace('chunk ', '');
  expect(chunkHref).toMatch(new RegExp(`/documents/\\d+\\?view=chunks&chunk=${chunkId}#chunk-${chunkId}$`));
  await prov.locator('a.graph-link').click();
  await expect(page).toHaveURL(/\/graph\?highlight=/);
  await expect(page.locator('#graph-canvas')).toHaveAttribute('data-emphasised', String(chips));
  await expect(page.locator('#graph-detail .detail-title')).toBeVisible();

  await openHydrated(page, chunkHref);
  const chunk = page.locator(`#chunk-${chunkId}`);
  await expect(chunk).toBeInViewport();
  await expect(chunk.locator('.chunk-head')).toContainText(`chunk ${chunkId}`);
  await expect(page.locator('#show-chunks')).toHaveClass(/active/);
  // A page of chunks (at most 10, #39), the one holding the chunk linked to.
  const all = Number((await page.locator('#show-chunks').textContent()).match(/\((\d+)\)/)[1]);
  await expect(page.locator('#chunks > li')).toHaveCount(Math.min(all, 10));
});

test('edit, delete and add questions; export and import a set', async ({ page, request }) => {
  await openHydrated(page, questionsUrl);
  const questions = page.locator('table.questions tbody tr[data-question]');
  await expect(questions).toHaveCount(9);

  const first = questions.first();
  await first.getByRole('button', { name: 'Edit' }).click();
  await first.locator('input.edit-question').fill('Who founded Saltmere, and why there?');
  await first.getByRole('button', { name: 'Save' }).click();
  await expect(questions.first()).toContainText('Who founded Saltmere, and why there?');
  await expect(questions.first()).toContainText('graph+edited');

  await questions.last().getByRole('button', { name: 'Delete…' }).click();
  await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
  await expect(questions).toHaveCount(8);

  await page.getByText('Add a question by hand').click();
  const add = page.locator('#add-question-form');
  await add.locator('input[name="question"]').fill('What did the Salt Guild fix?');
  await add.locator('input[name="level"]').fill('node');
  await add.locator('input[name="reference_answer"]').fill('The price of salt.');
  await add.getByRole('button', { name: 'Add' }).click();
  await expect(questions).toHaveCount(9);
  await expect(questions.last()).toContainText('manual');

  // Export: the file has the set's questions.
  const href = await page.locator('table.sets tbody tr').first().getByRole('link', { name: 'JSONL' }).getAttribute('href');
  const exported = await request.get(href);
  expect(exported.headers()['content-disposition']).toMatch(/attachment; filename="questions-set-\d+\.jsonl"/);
  const lines = (await exported.text()).trim().split('\n').map((l) => JSON.parse(l));
  expect(lines).toHaveLength(9);
  expect(lines[0].question).toBe('Who founded Saltmere, and why there?');
  expect(lines[8].reference_answer).toBe('The price of salt.');

  // Import it back as a new set, and a bad file with its reason.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'assay-q-'));
  const good = path.join(dir, 'round.jsonl');
  fs.writeFileSync(good, await exported.text());
  await page.getByText('Import a set or a benchmark').click();
  await page.locator('#import-form input[name="file"]').setInputFiles(good);
  await page.locator('#import-form').getByRole('button', { name: 'Import' }).click();
  await expect(page).toHaveURL(/\/questions\?set=\d+$/);
  await expect(page.locator('table.sets tbody tr')).toHaveCount(2);
  await expect(page.locator('#set-view > h2')).toHaveText('Imported from round.jsonl');
  await expect(page.locator('table.questions tbody tr[data-question]')).toHaveCount(9);

  const bad = path.join(dir, 'bad.jsonl');
  fs.writeFileSync(bad, '{"question": "Why?"}\n{"level": "node"}\n');
  await page.getByText('Import a set or a benchmark').click();
  await page.locator('#import-form input[name="file"]').setInputFiles(bad);
  await page.locator('#import-form').getByRole('button', { name: 'Import' }).click();
  await expect(page.locator('#import-error')).toContainText('line 2: missing field `question`');
  await expect(page.locator('table.sets tbody tr')).toHaveCount(2);
});

test('generate the summary-based baseline beside the graph set', async ({ page }) => {
  await openHydrated(page, questionsUrl);
  const sets = page.locator('table.sets tbody tr');
  const before = await sets.count();
  await page.getByText('Generate the summary-based baseline').click();
  const form = page.locator('#baseline-form');
  await form.locator('input[name="req[users]"]').fill('2');
  await form.locator('input[name="req[tasks]"]').fill('2');
  await form.locator('input[name="req[per_task]"]').fill('3');
  await page.locator('#generate-baseline').click();
  await expect(sets).toHaveCount(before + 1, { timeout: 60_000 });
  const row = sets.filter({ hasText: 'Summary-based questions: 2 users × 2 tasks × 3' });
  await expect(row).toContainText('12 summary');
  await expect(row).toContainText('offline provider');
  await row.getByRole('link', { name: /Summary-based/ }).click();
  await expect(page.locator('table.questions tbody tr[data-question]')).toHaveCount(12);
});

test('choosing another set switches the list in place, without a reload (#24)', async ({ page }) => {
  await openHydrated(page, questionsUrl);
  const sets = page.locator('table.sets tbody tr');
  const questions = page.locator('table.questions tbody tr[data-question]');
  // The newest set (the summary baseline, 12 questions) is shown by default.
  await expect(questions).toHaveCount(12);
  await page.evaluate(() => { window.__sameDocument = true; });
  const first = sets.first();
  const name = (await first.locator('a').first().textContent()).trim();
  await first.locator('a').first().click();
  await expect(page).toHaveURL(/\?set=\d+$/);
  await expect(page.locator('#set-view > h2')).toHaveText(name);
  await expect(first).toHaveClass(/selected/);
  await expect(questions).toHaveCount(9);
  await expect(questions.first()).toContainText('Who founded Saltmere, and why there?');
  // And back: the list follows the URL both ways, in the same document.
  await page.goBack();
  await expect(questions).toHaveCount(12);
  expect(await page.evaluate(() => window.__sameDocument)).toBe(true);
});

test('a job that ends before the page first polls it still shows what it made', async ({ page }) => {
  await openHydrated(page, questionsUrl);
  const sets = page.locator('table.sets tbody tr');
  const before = await sets.count();
  // Hold every job poll for 2 s: the small offline job is done before the
  // page sees it running (what a fast machine does by itself now and then).
  await page.route('**/api/list_jobs*', async (route) => {
    await new Promise((r) => setTimeout(r, 2000));
    await route.continue();
  });
  await page.getByText('Generate the summary-based baseline').click();
  const form = page.locator('#baseline-form');
  await form.locator('input[name="req[users]"]').fill('1');
  await form.locator('input[name="req[tasks]"]').fill('1');
  await form.locator('input[name="req[per_task]"]').fill('2');
  await page.locator('#generate-baseline').click();
  await expect(sets).toHaveCount(before + 1, { timeout: 20_000 });
  await page.unroute('**/api/list_jobs*');
});

test('generate hierarchical questions with reference answers', async ({ page }) => {
  await openHydrated(page, questionsUrl);
  const sets = page.locator('table.sets tbody tr');
  const before = await sets.count();
  await page.getByText('Generate questions with reference answers in hierarchical categories').click();
  const form = page.locator('#hierarchical-form');
  await form.locator('input[name="req[per_category]"]').fill('2');
  await form.locator('input[name="req[levels]"]').fill('2,4');
  await form.locator('input[name="req[dimensions]"]').fill('QC');
  await page.locator('#generate-hierarchical').click();
  await expect(sets).toHaveCount(before + 1, { timeout: 60_000 });
  const row = sets.filter({ hasText: 'Hierarchical questions' });
  await expect(row).toContainText('4 QC 2 · 8 QC 4');
  await row.getByRole('link', { name: /Hierarchical/ }).click();
  const questions = page.locator('table.questions tbody tr[data-question]');
  await expect(questions).toHaveCount(12);
  await questions.first().getByRole('button', { name: 'Provenance' }).click();
  await expect(page.locator('.provenance .reference-answer')).toContainText('Reference answer:');
  await expect(page.locator('.provenance')).toContainText(/Category: QC\/(simple|complex) · for a (novice|expert) user/);
  await expect(page.locator('.provenance .source-chunk')).toHaveCount(1);
});

test('share a question set read-only with its diagnostics; withdrawn, it is a 404', async ({ page, browser }) => {
  await openHydrated(page, questionsUrl);
  const rows = await page.locator('table.questions tbody tr[data-question]').count();
  await page.locator('#set-view #create-share').click();
  const sharePath = await page.locator('#share-link a').getAttribute('href');
  const guest = await (await browser.newContext({ storageState: { cookies: [], origins: [] } })).newPage();
  await openHydrated(guest, sharePath);
  await expect(guest.locator('#shared-question-table tbody tr')).toHaveCount(rows);
  await expect(guest.locator('#shared-entities')).toContainText('distinct entities');
  await expect(guest.locator('a[href*="/projects/"]')).toHaveCount(0);
  const jsonl = await guest.request.get(await guest.locator('a', { hasText: 'JSONL' }).getAttribute('href'));
  expect((await jsonl.text()).trim().split('\n').length).toBe(rows);
  await page.locator('#share-panel button', { hasText: 'Withdraw' }).click();
  await expect(page.locator('#share-panel')).toContainText('withdrawn');
  expect((await guest.goto(sharePath)).status()).toBe(404);
});

test('compare two sets by the entities their questions mention', async ({ page, request }) => {
  await openHydrated(page, questionsUrl);
  await page.getByText('Compare two sets: entities mentioned, retrieval relevance').click();
  const panels = page.locator('#compare-sets .entity-panel');
  await expect(panels).toHaveCount(2);
  // By default the graph set against the summary-based one.
  await expect(page.locator('#compare-a option:checked')).toContainText('Graph questions');
  await expect(page.locator('#compare-b option:checked')).toContainText('Summary-based questions');
  for (const i of [0, 1]) {
    await expect(panels.nth(i).locator('.distinct')).toHaveText(/^\d+$/);
    const img = panels.nth(i).locator('img');
    await expect.poll(() => img.evaluate((el) => el.complete && el.naturalWidth)).toBeGreaterThan(0);
  }
  const href = await panels.first().getByRole('link', { name: 'Download SVG' }).getAttribute('href');
  const svg = await request.get(href);
  expect(svg.headers()['content-type']).toContain('image/svg+xml');
  const body = await svg.text();
  const distinct = await panels.first().locator('.distinct').textContent();
  expect(body).toContain(`${distinct} distinct entities`);
});

test('have each question\'s entities listed per question, and see who listed them', async ({ page, request }) => {
  await openHydrated(page, questionsUrl);
  await page.getByText('Compare two sets: entities mentioned, retrieval relevance').click();
  const panels = page.locator('#compare-sets .entity-panel');
  await expect(panels.first().locator('.distinct')).toHaveText(/^\d+$/);
  await page.getByLabel('listed per question by the LLM (a job)').check();
  await expect(panels.first()).toHaveAttribute('data-source', 'llm');
  const list = panels.first().getByRole('button', { name: "List each question's entities with the LLM" });
  await list.click();
  const stats = panels.first().locator('.entity-stats');
  // The offline provider listed them, and the page says so.
  await expect(stats).toContainText(/listed by offline \(no LLM\) in job #\d+ \(9 of 9 questions\)/, { timeout: 60_000 });
  await expect(stats).toContainText(/\d+ in the graph/);
  const img = panels.first().locator('img');
  await expect.poll(() => img.evaluate((el) => el.complete && el.naturalWidth)).toBeGreaterThan(0);
  const svg = await (await request.get(await img.getAttribute('src'))).text();
  expect(svg).toContain('listed by offline (no LLM)');
  // Back to the graph's names: the matched count again, no job.
  await page.getByLabel("the graph's entity names, matched in the questions").check();
  await expect(panels.first()).toHaveAttribute('data-source', 'graph');
  await expect(panels.first().locator('.entity-stats')).not.toContainText('listed by');
});

test('score question–retrieval relevance for a set and see its histogram', async ({ page }) => {
  await openHydrated(page, questionsUrl);
  await page.getByText('Compare two sets: entities mentioned, retrieval relevance').click();
  const first = page.locator('#compare-sets .entity-panel').first();
  await first.getByRole('button', { name: /Score question–retrieval relevance/ }).click();
  await expect(first.locator('.relevance-stats')).toContainText(/mean \d\.\d\d of 5 over 9 of 9 questions/, { timeout: 60_000 });
  const img = first.locator('.relevance img');
  await expect.poll(() => img.evaluate((el) => el.complete && el.naturalWidth)).toBeGreaterThan(0);
});

test('edit the project\'s category hierarchy: refused with the reason, saved, reset', async ({ page }) => {
  await openHydrated(page, questionsUrl);
  await page.getByText('Generate questions with reference answers in hierarchical categories').click();
  await page.getByText('Edit the category hierarchy (JSON)').click();
  const status = page.locator('#hierarchy-status');
  await expect(status).toContainText('The shipped default');
  const area = page.locator('#hierarchy-form textarea');
  await expect(area).toHaveValue(/extractive_span/);

  // A tree that is not 2/4/8 is refused, with the reason, and nothing changes.
  const original = await area.inputValue();
  const broken = JSON.parse(original);
  broken.QC.categories[0].children.pop();
  await area.fill(JSON.stringify(broken));
  await page.locator('#hierarchy-form').getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('alert')).toContainText('QC/simple has 1 child categories, not 2');
  await expect(status).toContainText('The shipped default');
  // The refused text stays in the box, to be mended (it is not replaced by
  // the stored hierarchy read again).
  await page.waitForTimeout(500);
  await expect(area).toHaveValue(JSON.stringify(broken));

  // A changed definition is saved and kept.
  await area.fill(original.replace('The answer is a short span copied', 'CUSTOM: a short span copied'));
  await page.locator('#hierarchy-form').getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await expect(status).toContainText("This project's own hierarchy");
  await openHydrated(page, questionsUrl);
  await page.getByText('Generate questions with reference answers in hierarchical categories').click();
  await page.getByText('Edit the category hierarchy (JSON)').click();
  await expect(page.locator('#hierarchy-form textarea')).toHaveValue(/CUSTOM: a short span copied/);

  await page.locator('#hierarchy-form').getByRole('button', { name: 'Reset to the default' }).click();
  await expect(page.locator('#hierarchy-status')).toContainText('The shipped default');
  await expect(page.locator('#hierarchy-form textarea')).not.toHaveValue(/CUSTOM/);
});

test('import a GraphRAG-Bench question file with its corpus: documents added, categories kept, LightRAG export (#41)', async ({ page, request }) => {
  await createProject(page, 'Benchmark import');
  const projectUrl = page.url().replace(/\/corpus$/, '');
  const { corpus, questions } = graphragBenchPair();

  await openHydrated(page, `${projectUrl}/questions`);
  await page.getByText('Import a set or a benchmark').click();
  const form = page.locator('#import-form');
  await form.locator('select[name="format"]').selectOption('graphrag-bench');
  await form.locator('input[name="file"]').setInputFiles(questions);
  // Without its corpus the file is refused, with the reason, and nothing is stored.
  await form.getByRole('button', { name: 'Import' }).click();
  await expect(page.locator('#import-error')).toContainText('give the corpus file too');
  await expect(page.locator('table.sets')).toHaveCount(0);

  // The panel stays open beside its error; the files are chosen again.
  await expect(page.locator('details:has(#import-form)')).toHaveAttribute('open', '');
  await form.locator('select[name="format"]').selectOption('graphrag-bench');
  await form.locator('input[name="file"]').setInputFiles(questions);
  await form.locator('input[name="corpus"]').setInputFiles(corpus);
  await form.locator('input[name="name"]').fill('GraphRAG-Bench novel');
  await form.getByRole('button', { name: 'Import' }).click();
  await expect(page).toHaveURL(/\/questions\?set=\d+&imported=/);
  const report = page.locator('#import-report');
  await expect(report).toContainText('2 documents added');
  await expect(report).toContainText('3 questions (2 Fact Retrieval, 1 Creative Generation; 3 with a reference answer)');
  await expect(report).toContainText('evidence located for 2, not found for 0');
  await expect(page.locator('#set-view > h2')).toHaveText('GraphRAG-Bench novel');
  const rows = page.locator('table.questions tbody tr[data-question]');
  await expect(rows).toHaveCount(3);
  await expect(rows.first()).toContainText('Fact Retrieval');

  // Its documents are the project's corpus now.
  await openHydrated(page, `${projectUrl}/corpus`);
  await expect(page.locator('table.documents tbody tr')).toHaveCount(2);

  // The set as LightRAG's reproduce/ scripts read it: "- Question N: …".
  await openHydrated(page, `${projectUrl}/questions`);
  const href = await page.locator('table.sets tbody tr').first().getByRole('link', { name: 'LightRAG' }).getAttribute('href');
  const exported = await request.get(href);
  expect(exported.status()).toBe(200);
  const lines = (await exported.text()).trim().split('\n');
  expect(lines).toEqual([
    '- Question 1: Which heath grows on the cliffs?',
    '- Question 2: What did the keeper log?',
    '- Question 3: Retell the keeper\'s winter.',
  ]);
});

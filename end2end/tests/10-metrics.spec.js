// The Metrics page: an offline hierarchical question set with reference
// answers and BM25's answers; "Compute" starts a run and opens its page,
// which follows the job to the seed-004 report: the overall table, the
// granularity table and chart, the splits with their Coherence Ratio and
// the hierarchy drawn, the LV × QC table with its main effects; the
// per-question CSV and a chart's PNG download; the run is listed; a share
// link opens the report with no session.
const { test, expect } = require('@playwright/test');
const { execFileSync } = require('child_process');
const path = require('path');
const { openHydrated } = require('./helpers');

const bin = process.env.ASSAY_BIN || path.resolve(__dirname, '../../target/debug/assay');
const cli = (...args) => JSON.parse(execFileSync(bin, ['--json', ...args, '--db', process.env.ASSAY_E2E_DB], {
  env: { ...process.env, ASSAY_LLM_PROVIDER: '', ASSAY_LLM_BASE_URL: '' },
}).toString());

// The run's report on its page, once its job has ended. A run that has not
// shown it in 150 s fails saying what its project's jobs and the page said
// (one CI run saw the second run's report missing after 60 s, and said no more).
async function reportShown(page, project, answers) {
  const row = page.locator(`#metrics-overall tr[data-answers="${answers}"]`);
  try {
    await expect(row).toContainText('bm25', { timeout: 150_000 });
  } catch (e) {
    const jobs = cli('job', 'list', String(project)).map((j) => `#${j.id} ${j.kind} ${j.status} ${j.done}/${j.total} ${j.error || ''}`);
    const shown = await page.locator('main').innerText().catch(() => '(no page)');
    e.message += `\nat ${page.url()}\nthe project's jobs:\n  ${jobs.join('\n  ')}\nthe page said:\n${shown.slice(0, 1500)}`;
    throw e;
  }
  return row;
}

test('compute MAP, nDCG, Recall, CS, ROUGE-1 and BLEU with the granularity analysis', async ({ page }) => {
  test.setTimeout(420_000);
  const project = cli('project', 'create', 'Metrics demo').id;
  cli('corpus', 'add', String(project), '--sample');
  const set = cli('questions', 'generate', 'hierarchical', String(project), '--per-category', '1',
    '--levels', '2,4', '--dimensions', 'QC,LV', '--factorial', '1').set_id;
  const answers = cli('answers', 'generate', String(project), '--set', String(set), '--method', 'bm25').answers_id;

  await openHydrated(page, `/projects/${project}/metrics`);
  await expect(page.locator('#metrics-set')).toHaveValue(String(set));
  await expect(page.locator(`#metrics-answers input[data-answers="${answers}"]`)).toBeChecked();
  await page.locator('#compute-metrics').click();
  await expect(page).toHaveURL(new RegExp(`/projects/${project}/metrics/\\d+$`), { timeout: 15_000 });
  await expect(page.locator('#run-job')).toBeVisible();
  const overall = await reportShown(page, project, answers);
  // Relevance at the HieraRAG paper's unit by default, said on the report.
  await expect(page.locator('#relevance-unit')).toContainText("source document (the HieraRAG paper's unit)");
  // Five documents, ten chunks retrieved: the document unit cannot tell retrievers apart, and the page says so (#39).
  await expect(page.locator('#unit-warning')).toContainText('This corpus has 5 documents, no more than the 10 chunks retrieved');
  const cells = overall.locator('td.num');
  await expect(cells.nth(0)).toHaveText('16');
  for (let i = 1; i <= 5; i++) await expect(cells.nth(i)).toHaveText(/^[01]\.\d{3}$/);
  const detail = page.locator(`section.metrics-set[data-answers="${answers}"]`);
  await expect(detail.locator('table.granularity tbody tr')).toHaveCount(4);
  // The best level is called optimal only when its interval clears the others' (#39), else "highest".
  await expect(detail.locator('table.granularity')).toContainText(/optimal|highest, its interval reaching level/);
  // Few questions per category: the numbers come with intervals, a noise floor and a warning.
  await expect(detail.locator('table.granularity tbody tr').first()).toContainText('[');
  await expect(detail.locator('.granularity-warning')).toContainText("fewer than the HieraRAG paper's 38");
  await expect(detail.locator('table.splits tbody tr')).toHaveCount(4);
  await expect(detail.locator('.tree figure')).toHaveCount(2);
  // Charts are images the browser fetches on its own, not inline in the page (#39).
  const tree = detail.locator('.tree figure').first().locator('img');
  await expect.poll(() => tree.evaluate((el) => el.complete && el.naturalWidth)).toBeGreaterThan(0);
  expect(await (await page.request.get(await tree.getAttribute('src'))).text()).toContain('ρ');
  // 4 cells, the "Main effects" line, 2 LV and 2 QC pooled levels.
  await expect(detail.locator('table.factorial tbody tr')).toHaveCount(4 + 1 + 4);
  await expect(detail.locator('#main-effects')).toContainText(/LV Δ = \d\.\d{3} · QC Δ = \d\.\d{3}/);
  const csv = await page.request.get(await page.locator('a', { hasText: "Every question's metrics (CSV)" }).getAttribute('href'));
  expect(csv.status()).toBe(200);
  expect((await csv.text()).trim().split('\n').length).toBe(1 + 16);
  const png = await page.request.get(await detail.locator('figure[data-chart^="power-"] a', { hasText: 'PNG' }).getAttribute('href'));
  expect(png.status()).toBe(200);
  expect(png.headers()['content-type']).toBe('image/png');

  // Standard definitions by default, said on the report (#42).
  await expect(page.locator('#definitions')).toHaveAttribute('data-definitions', 'standard');
  await expect(page.locator('#metrics-overall thead')).toContainText('BLEU (0–100)');

  // Listed on the Metrics page.
  const run = page.url().split('/').pop();
  await openHydrated(page, `/projects/${project}/metrics`);
  await expect(page.locator(`#metrics-runs tr[data-run="${run}"]`)).toContainText('done');

  // The HieraRAG authors' definitions, chosen on the form: the report says
  // so and why AP can exceed 1, BLEU is NLTK's 0–1.
  await page.locator('#metrics-definitions').selectOption('as-published');
  await page.locator('#compute-metrics').click();
  await expect(page).toHaveURL(new RegExp(`/projects/${project}/metrics/(?!${run}$)\\d+$`), { timeout: 15_000 });
  await reportShown(page, project, answers);
  await expect(page.locator('#definitions')).toHaveAttribute('data-definitions', 'as-published');
  await expect(page.locator('#definitions')).toContainText('can exceed 1');
  await expect(page.locator('#metrics-overall thead')).toContainText('BLEU (0–1, NLTK)');
  await openHydrated(page, `/projects/${project}/metrics`);

  // Shared: the report opens from the link with no session.
  const share = cli('share', 'create', String(project), '--page', `metrics:${run}`);
  const anonymous = await page.context().browser().newContext();
  const shared = await anonymous.newPage();
  await shared.goto(`${new URL(page.url()).origin}/share/${share.token}`);
  await expect(shared.locator(`#metrics-overall tr[data-answers="${answers}"]`)).toContainText('bm25');
  const html = await shared.request.get(await shared.locator('a', { hasText: 'One HTML file' }).getAttribute('href'));
  expect(html.status()).toBe(200);
  const text = await html.text();
  expect(text).toContain('LV × QC');
  expect(text).toContain('href="https://arxiv.org/abs/2606.12789"');
  await anonymous.close();
});

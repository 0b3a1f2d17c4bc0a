// The Metrics page: an offline hierarchical question set with reference
// answers and BM25's answers; computing the seed-004 metrics shows the
// overall table, the granularity table and chart, the splits with their
// Coherence Ratio and the hierarchy drawn, the LV × QC table, and the
// per-question CSV.
const { test, expect } = require('@playwright/test');
const { execFileSync } = require('child_process');
const path = require('path');
const { openHydrated } = require('./helpers');

const bin = process.env.ASSAY_BIN || path.resolve(__dirname, '../../target/debug/assay');
const cli = (...args) => JSON.parse(execFileSync(bin, ['--json', ...args, '--db', process.env.ASSAY_E2E_DB], {
  env: { ...process.env, ASSAY_LLM_PROVIDER: '', ASSAY_LLM_BASE_URL: '' },
}).toString());

test('compute MAP, nDCG, Recall, CS, ROUGE-1 and BLEU with the granularity analysis', async ({ page }) => {
  const project = cli('project', 'create', 'Metrics demo').id;
  cli('corpus', 'add', String(project), '--sample');
  const set = cli('questions', 'generate', String(project), '--kind', 'hierarchical', '--per-category', '1',
    '--levels', '2,4', '--dimensions', 'QC,LV', '--factorial', '1').set_id;
  const answers = cli('answers', 'generate', String(project), '--set', String(set), '--method', 'bm25').answers_id;

  await openHydrated(page, `/projects/${project}/metrics`);
  await expect(page.locator('#metrics-set')).toHaveValue(String(set));
  await expect(page.locator(`#metrics-answers input[data-answers="${answers}"]`)).toBeChecked();
  await page.locator('#compute-metrics').click();
  const overall = page.locator(`#metrics-overall tr[data-answers="${answers}"]`);
  await expect(overall).toContainText('bm25', { timeout: 60_000 });
  const cells = overall.locator('td.num');
  await expect(cells.nth(0)).toHaveText('16');
  for (let i = 1; i <= 5; i++) await expect(cells.nth(i)).toHaveText(/^[01]\.\d{3}$/);
  const detail = page.locator(`section.metrics-set[data-answers="${answers}"]`);
  await expect(detail.locator('table.granularity tbody tr')).toHaveCount(4);
  await expect(detail.locator('table.granularity')).toContainText('optimal');
  await expect(detail.locator('table.splits tbody tr')).toHaveCount(4);
  await expect(detail.locator('figure.tree')).toHaveCount(2);
  await expect(detail.locator('figure.tree').first().locator('svg')).toContainText('ρ');
  await expect(detail.locator('table.factorial tbody tr')).toHaveCount(4);
  const csv = await page.request.get(await page.locator('a', { hasText: "Every question's metrics (CSV)" }).getAttribute('href'));
  expect(csv.status()).toBe(200);
  expect((await csv.text()).trim().split('\n').length).toBe(1 + 16);
});

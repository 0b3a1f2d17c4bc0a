// The Evaluations pages: with two methods' answers made headless (the CLI
// on the same database), start an offline evaluation in the browser, follow
// it to its report — the judge named, the box plots, the heatmap, the pair
// table — and drill down to one question's judgments in both orders with
// their call log.
const { test, expect } = require('@playwright/test');
const { execFileSync } = require('child_process');
const path = require('path');
const { openHydrated, wasmGroups } = require('./helpers');

const bin = process.env.ASSAY_BIN || path.resolve(__dirname, '../../target/debug/assay');
const cli = (...args) => JSON.parse(execFileSync(bin, ['--json', ...args, '--db', process.env.ASSAY_E2E_DB], {
  env: { ...process.env, ASSAY_LLM_PROVIDER: '', ASSAY_LLM_BASE_URL: '' },
}).toString());

test('an offline evaluation of two methods: report, heatmap, drill-down, a read-only share link', async ({ page, browser }) => {
  const project = cli('project', 'create', 'Evaluation demo').id;
  cli('corpus', 'add', String(project), '--sample');
  cli('graph', 'build', String(project));
  const set = cli('questions', 'generate', 'graph', String(project), '--node', '3', '--edge', '2', '--subgraph', '1', '--min-hops', '10').set_id;
  for (const method of ['bm25', 'lightrag']) {
    cli('answers', 'generate', String(project), '--set', String(set), '--method', method);
  }

  await openHydrated(page, `/projects/${project}/evaluations`);
  await expect(page.locator('#no-evaluations')).toBeVisible();
  const form = page.locator('#evaluation-form');
  // Both answer sets of the question set are ticked; the bias lab's settings show only for its judge.
  await expect(form.locator('#answer-set-choices input[type="checkbox"]:checked')).toHaveCount(2);
  await expect(form.locator('input[name="position_bias"]')).toBeHidden();
  await form.locator('#judge-select').selectOption('simulated');
  await expect(form.locator('input[name="position_bias"]')).toBeVisible();
  await form.locator('#judge-select').selectOption('offline');
  await form.locator('input[name="trials"]').fill('3');
  await form.locator('input[name="sanity_first"]').uncheck();
  await page.locator('#start-evaluation').click();

  const row = page.locator('table.evaluations tbody tr').first();
  await expect(row).toContainText('bm25 vs lightrag');
  await expect(row).toContainText('offline rubric judge (no LLM)');
  await expect(row.locator('[class*="status-"]')).toHaveText('done', { timeout: 60_000 });
  await row.locator('a').first().click();
  await expect(page).toHaveURL(/\/evaluations\/\d+$/);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();

  // The report: who judged, said plainly; the plots drawn; the numbers.
  await expect(page.locator('#judge-line')).toContainText('offline rubric judge (no LLM)');
  await expect(page.locator('#judge-line')).toContainText('not an LLM');
  const box = page.locator('.plot[data-plot="box"] svg');
  await expect(box).toBeVisible();
  await expect(box).toContainText('bm25 vs lightrag');
  await expect(box).toContainText('3 trials');
  const heatmap = page.locator('.plot[data-plot="heatmap"] svg');
  await expect(heatmap).toContainText('bm25');
  await expect(heatmap).toContainText('lightrag');
  await expect(page.locator('.plot[data-plot="legacy-heatmap"] svg')).toBeVisible();
  const pair = page.locator('#pair-table tbody tr');
  await expect(pair).toHaveCount(1);
  await expect(pair.locator('td').nth(1)).toHaveText('6');
  // One summary per pair, the median trial's, each number with its interval; never "-0.00".
  const signed = '(0\\.00|[+-]\\d\\.\\d\\d)';
  await expect(pair.locator('td.relative')).toHaveText(new RegExp(`^${signed} \\[${signed}, ${signed}\\]$`));
  await expect(pair.locator('td').nth(2)).toHaveText(/^\d+% \[\d+–\d+%\]$/);
  await expect(page.locator('main')).toContainText('scoring prompt paper (sha256 ');
  await expect(page.locator('#bias-audit')).toContainText('Verdict flips when the order swaps');
  // Downloads are real files.
  const png = await page.request.get(await page.locator('.plot[data-plot="box"] a', { hasText: 'PNG' }).getAttribute('href'));
  expect(png.headers()['content-type']).toBe('image/png');
  const csv = await page.request.get(await page.locator('.downloads a', { hasText: 'judgments.csv' }).getAttribute('href'));
  expect((await csv.text()).trim().split('\n').length).toBeGreaterThan(1);

  // Drill-down: the pair, a question, every judgment in both orders.
  await page.locator('#drill a.chip', { hasText: 'bm25 vs lightrag' }).click();
  const questions = page.locator('table.drill-questions tbody tr');
  await expect(questions).toHaveCount(6);
  await questions.first().locator('a').click();
  const detail = page.locator('#drill-question');
  await expect(detail.locator('.two-answers .answer')).toHaveCount(2);
  const judgments = detail.locator('table.judgments tbody tr');
  await expect(judgments).toHaveCount(12); // 3 trials × 2 repeats × 2 orders
  await expect(detail.locator('table.judgments tr[data-order="A first"]')).toHaveCount(6);
  await expect(detail.locator('table.judgments tr[data-order="B first"]')).toHaveCount(6);
  await expect(judgments.first().locator('td.reasoning')).toContainText('offline rubric');
  await judgments.first().getByRole('button', { name: 'Calls' }).click();
  await expect(judgments.first().locator('.call-log .call').first()).toContainText('judge_scores');

  // Share it read-only: a stranger (no cookie) sees the report, no controls; withdrawn, 404.
  await page.locator('#create-share').click();
  const link = page.locator('#share-link a');
  await expect(link).toHaveAttribute('href', /^\/share\/[0-9a-f]{48}$/);
  const sharePath = await link.getAttribute('href');
  const stranger = await (await browser.newContext()).newPage();
  await openHydrated(stranger, sharePath);
  await expect(stranger.locator('#judge-line')).toContainText('offline rubric judge (no LLM)');
  // The shared page's frame and the reports' group of the WASM: not the
  // graph explorer's.
  expect(await wasmGroups(stranger)).toEqual(['report', 'share']);
  await expect(stranger.locator('.plot[data-plot="box"] svg')).toBeVisible();
  await expect(stranger.locator('#share-panel')).toHaveCount(0);
  await expect(stranger.locator('a[href^="/projects/"]')).toHaveCount(0);
  const html = await stranger.request.get(await stranger.locator('.downloads a', { hasText: 'One HTML file' }).getAttribute('href'));
  expect(await html.text()).toContain('<svg');
  await page.locator('table.shares button', { hasText: 'Withdraw' }).click();
  await expect(page.locator('table.shares')).toContainText('withdrawn');
  const gone = await stranger.goto(sharePath);
  expect(gone.status()).toBe(404);
});

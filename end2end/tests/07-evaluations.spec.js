// The Evaluations pages: with two methods' answers made headless (the CLI
// on the same database), start an offline evaluation in the browser, follow
// it to its report — the judge named, the box plots, the heatmap, the pair
// table — and drill down to one question's judgments in both orders with
// their call log; the paper view (Figs. 14–17) through a share link.
const { test, expect } = require('@playwright/test');
const { execFileSync } = require('child_process');
const path = require('path');
const { openHydrated, wasmGroups } = require('./helpers');

const bin = process.env.ASSAY_BIN || path.resolve(__dirname, '../../target/debug/assay');
const cli = (...args) => JSON.parse(execFileSync(bin, ['--json', ...args, '--db', process.env.ASSAY_E2E_DB], {
  env: { ...process.env, ASSAY_LLM_PROVIDER: '', ASSAY_LLM_BASE_URL: '' },
}).toString());

/**
 * A report's plot (its name, or a name's beginning): drawn in the page as an
 * image the browser fetched on its own (#39: never inline in the page's
 * HTML); resolves to the SVG's text.
 */
async function expectPlot(page, name) {
  const img = page.locator(name.endsWith('-') ? `.plot[data-plot^="${name}"] img` : `.plot[data-plot="${name}"] img`).first();
  await expect(img).toBeVisible();
  await expect.poll(() => img.evaluate((el) => el.complete && el.naturalWidth)).toBeGreaterThan(0);
  const svg = await (await page.request.get(await img.getAttribute('src'))).text();
  expect(svg.startsWith('<svg')).toBe(true);
  return svg;
}

/**
 * A project with the sample corpus, its graph, 6 graph questions (3 node,
 * 2 edge, 1 subgraph) and BM25's and LightRAG's answers, made headless.
 */
function withAnswers(name) {
  const project = cli('project', 'create', name).id;
  cli('corpus', 'add', String(project), '--sample');
  cli('graph', 'build', String(project));
  const set = cli('questions', 'generate', 'graph', String(project), '--node', '3', '--edge', '2', '--subgraph', '1', '--min-hops', '10').set_id;
  for (const method of ['bm25', 'lightrag']) {
    cli('answers', 'generate', String(project), '--set', String(set), '--method', method);
  }
  return { project, set };
}

let legacyProject;

test('a legacy-only report states only what was run: no trials, no unbiased charts (#24)', async ({ page }) => {
  const made = withAnswers('Legacy demo');
  legacyProject = made.project;
  const set = made.set;
  cli('eval', 'run', String(legacyProject), '--set', String(set), '--methods', 'bm25,lightrag', '--protocol', 'legacy', '--judge', 'offline');
  await openHydrated(page, `/projects/${legacyProject}/evaluations`);
  const row = page.locator('table.evaluations tbody tr').first();
  await expect(row).toContainText('legacy only · one verdict per question');
  await expect(row).not.toContainText('trials');
  await row.locator('a').first().click();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  const settings = page.locator('#eval-settings');
  await expect(settings).toContainText('legacy protocol: one verdict per question, A shown first, a winner forced');
  for (const absent of ['M = ', 'N = ', 'length alignment', 'position exchange', 'trials']) {
    await expect(settings).not.toContainText(absent);
  }
  await expect(page.locator('.plot[data-plot="box"]')).toHaveCount(0);
  await expect(page.locator('.plot[data-plot="heatmap"]')).toHaveCount(0);
  await expect(page.locator('#ranking')).toHaveCount(0);
  await expect(page.locator('.plot[data-plot^="levels-"]')).toHaveCount(0);
  await expectPlot(page, 'legacy-heatmap');
  await expectPlot(page, 'aspects-');
  const head = page.locator('#pair-table thead');
  await expect(head).toContainText('Legacy A / B');
  await expect(head).not.toContainText('A wins [95% CI]');
  await expect(head).not.toContainText('Length alignment');
  await expect(page.locator('#pair-table tbody td').nth(2)).toHaveText(/^\d+% \/ \d+% \((0\.00|[+-]\d\.\d\d)\)$/);
  const audit = page.locator('#bias-audit');
  await expect(audit).toContainText('Legacy: the first-shown answer wins');
  await expect(audit).not.toContainText('Verdict flips');
  await expect(audit).not.toContainText('across trials');
  await expect(page.locator('#bias-verdict')).toContainText(/Legacy protocol: A, always shown first, wins \d+% of 6 verdicts/);
  // The paper's figures are the unbiased protocol's: its view says so, drawing none.
  await page.locator('#to-paper').click();
  await expect(page.locator('#paper-none')).toContainText('legacy protocol only');
  await expect(page.locator('#fig14')).toHaveCount(0);
});

test('a sanity check\'s second run belongs to its check: listed under it, never a default (#24)', async ({ page }) => {
  const set = cli('questions', 'list', String(legacyProject)).at(-1).id;
  cli('eval', 'sanity', String(legacyProject), '--set', String(set), '--method', 'lightrag', '--judge', 'offline');
  await openHydrated(page, `/projects/${legacyProject}/answers`);
  // The cost table and the default selection: the two sets a user made.
  await expect(page.locator('table.cost-table tbody tr')).toHaveCount(2);
  await expect(page.locator('table.cost-table')).not.toContainText('(second run)');
  await expect(page.locator('#side-by-side h2')).not.toContainText('(second run)');
  const checks = page.locator('#sanity-sets');
  await expect(checks.locator('summary')).toHaveText("Sanity checks' second runs (1)");
  await checks.locator('summary').click();
  await expect(checks.locator('li')).toContainText('(second run)');
  await expect(checks.locator('li a', { hasText: 'its sanity check' })).toHaveAttribute('href', /\/evaluations\/\d+$/);

  await openHydrated(page, `/projects/${legacyProject}/evaluations`);
  await expect(page.locator('#sanity-checks')).toBeVisible();
  const lists = page.locator('table.evaluations');
  await expect(lists).toHaveCount(2);
  await expect(lists.first()).not.toContainText('sanity check');
  await expect(lists.nth(1)).toContainText('sanity check');
  // The new evaluation's form offers and ticks the user's two sets only.
  const choices = page.locator('#answer-set-choices input[type="checkbox"]');
  await expect(choices).toHaveCount(2);
  await expect(page.locator('#answer-set-choices input[type="checkbox"]:checked')).toHaveCount(2);
  await expect(page.locator('#answer-set-choices')).not.toContainText('(second run)');
});

test('a job page shows its items a page at a time, results summed up, calls on demand (#24)', async ({ page }) => {
  const set = cli('questions', 'list', String(legacyProject)).at(-1).id;
  const run = cli('eval', 'run', String(legacyProject), '--set', String(set), '--methods', 'bm25,lightrag', '--protocol', 'unbiased',
    '--judge', 'offline', '--trials', '12', '--repeats', '1', '--name', 'many items');
  await openHydrated(page, `/projects/${legacyProject}/jobs/${run.job}`);
  // 6 alignment items and 6 questions × 12 trials.
  await expect(page.locator('#items')).toHaveText('Items (78 finished)');
  await expect(page.locator('#job-summary')).toContainText('78 (78 done, 0 failed)');
  const rows = page.locator('#job-items tbody tr[data-item]');
  await expect(rows).toHaveCount(50);
  await expect(page.locator('#item-pager')).toContainText('1–50 of 78 · page 1 of 2');
  const firstKey = await rows.first().getAttribute('data-item');
  // The page stays a reading size: no raw dump of every answer and context.
  expect(await page.evaluate(() => document.body.scrollHeight)).toBeLessThan(20_000);
  await page.locator('#item-pager a[rel="next"]').click();
  await expect(page).toHaveURL(/\?page=2$/);
  await expect(rows).toHaveCount(28);
  await expect(page.locator('#item-pager')).toContainText('51–78 of 78 · page 2 of 2');
  expect(await rows.first().getAttribute('data-item')).not.toBe(firstKey);
  // Calls answer at once after load, and load only when asked for.
  const calls = page.waitForResponse((r) => r.url().includes('get_item_calls'));
  await rows.first().getByRole('button', { name: 'Calls' }).click();
  await calls;
  await expect(page.locator('.call-log .call').first()).toContainText('judge_scores');
  await page.locator('a.chip', { hasText: 'failed' }).click();
  await expect(page).toHaveURL(/\?page=1&status=failed$/);
  await expect(page.locator('#no-items')).toBeVisible();
});

test('an offline evaluation of two methods: report, heatmap, drill-down, a read-only share link', async ({ page, browser }) => {
  const { project } = withAnswers('Evaluation demo');

  await openHydrated(page, `/projects/${project}/evaluations`);
  await expect(page.locator('#no-evaluations')).toBeVisible();
  await expect(page.locator('#decide-no-pilot')).toBeAttached();
  const form = page.locator('#evaluation-form');
  // Both answer sets of the question set are ticked; the bias lab's settings show only for its judge.
  await expect(form.locator('#answer-set-choices input[type="checkbox"]:checked')).toHaveCount(2);
  await expect(form.locator('input[name="req[position_bias]"]')).toBeHidden();
  await form.locator('#judge-select').selectOption('simulated');
  await expect(form.locator('input[name="req[position_bias]"]')).toBeVisible();
  await form.locator('#judge-select').selectOption('offline');
  await form.locator('input[name="req[trials]"]').fill('3');
  // The price before the run (#39), counted on the answers it would judge:
  // 6 questions × (3 trials × 2 repeats × 2 orders + 1 legacy verdict).
  const price = page.locator('#evaluation-price');
  const judging = price.locator('.plan-stages tr', { hasText: 'evaluation: judging' });
  await expect(judging.locator('td').nth(1)).toHaveText('78');
  // Position exchange off (a box on by default: its state travels as
  // req[exchange]): one order, 6 × (3 × 2 + 1).
  await form.locator('#exchange').uncheck();
  await expect(judging.locator('td').nth(1)).toHaveText('42');
  await form.locator('#exchange').check();
  await expect(judging.locator('td').nth(1)).toHaveText('78');
  await expect(price.locator('.price-total')).toContainText('free');
  await expect(price.locator('.price-who')).toContainText('nothing is sent to a model');
  // A sanity check is a choice of its own, off by default, with its price.
  const sanityBox = form.locator('input[name="sanity_first"]');
  await expect(sanityBox).not.toBeChecked();
  await sanityBox.check();
  await expect(price.locator('.plan-stages tr', { hasText: 'sanity check of' }).first()).toBeVisible();
  await sanityBox.uncheck();
  await expect(price.locator('.plan-stages tr', { hasText: 'sanity check of' })).toHaveCount(0);
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
  const box = await expectPlot(page, 'box');
  expect(box).toContain('bm25 vs lightrag');
  expect(box).toContain('3 trials');
  const heatmap = await expectPlot(page, 'heatmap');
  expect(heatmap).toContain('bm25');
  expect(heatmap).toContain('lightrag');
  await expectPlot(page, 'legacy-heatmap');
  // Both methods ranked at once (Bradley–Terry), scores around 1000 with intervals.
  const ranked = page.locator('#ranking-table tbody tr');
  await expect(ranked).toHaveCount(2);
  await expect(ranked.first().locator('td').nth(0)).toHaveText('1');
  await expect(ranked.first().locator('td.score')).toHaveText(/^\d{3,4}$/);
  await expect(ranked.first().locator('td.ci')).toHaveText(/^\d{3,4}–\d{3,4}$/);
  // The length-controlled win rate beside the raw one, both fits, in percent.
  const lc = page.locator('#length-control-table tbody tr');
  await expect(lc).toHaveCount(1);
  await expect(lc.locator('td.lc-paper')).toHaveText(/^(\d{1,3}\.\d%|—)$/);
  await expect(lc.locator('td.lc-code')).toHaveText(/^\d{1,3}\.\d%$/);
  // Plan the next run from this one (#43): questions × M typed, the
  // simulation's table and curve come back; nothing is started.
  const planner = page.locator('#plan-from-pilot');
  await planner.locator('input[name="questions"]').fill('400');
  await planner.locator('input[name="difference"]').fill('0.3');
  await planner.locator('#plan-from-pilot-run').click();
  const planned = planner.locator('.decide-plan .decide-pair');
  await expect(planned).toHaveCount(1);
  await expect(planned.locator('.decide-run-line')).toContainText(/^This run: the headline's interval ±0\.\d{3} \((reaches|misses) ±0\.05\); power \d+% to detect a difference of -?0\.\d\d\.$/);
  await expect(planned.locator('table.decide-table tbody tr')).toHaveCount(8);
  await expect(planned.locator('table.decide-table thead')).toContainText('M = 3');
  await expect(planned.locator('tr[data-questions="6400"] td').nth(1)).toHaveText(/^±0\.\d{3} \(\d+%\)$/);
  await expect(planned.locator('.svg svg')).toBeAttached();
  const pair = page.locator('#pair-table tbody tr');
  await expect(pair).toHaveCount(1);
  await expect(pair.locator('td').nth(1)).toHaveText('6');
  // One summary per pair, the median trial's, each number with its interval; never "-0.00".
  const signed = '(0\\.00|[+-]\\d\\.\\d\\d)';
  await expect(pair.locator('td.relative')).toHaveText(new RegExp(`^${signed} \\[${signed}, ${signed}\\]$`));
  await expect(pair.locator('td').nth(2)).toHaveText(/^\d+% \[\d+–\d+%\]( †)?$/);
  await expect(pair.locator('td.medians')).toHaveText(/^A \d+% · tie \d+% · B \d+%$/);
  await expect(page.locator('main')).toContainText('scoring prompt paper (sha256 ');
  await expect(page.locator('#bias-audit')).toContainText('Verdict flips when the order swaps');
  // The audit's rates read as one sentence per bias (#24).
  await expect(page.locator('#bias-verdict')).toContainText(/^Position: the answer shown first wins \d+% of \d+ decided judgments/);
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
  // An absolute URL, shown once, with a Copy button that puts it on the clipboard (#24).
  await expect(link).toHaveAttribute('href', new RegExp(`^${page.url().split('/projects/')[0]}/share/[0-9a-f]{48}$`));
  await expect(page.locator('#share-link')).toContainText('it is shown only once');
  const sharePath = await link.getAttribute('href');
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.locator('#share-link button.copy').click();
  await expect(page.locator('#share-link button.copy')).toHaveText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(sharePath);
  await expect(page.locator('table.shares tr').first()).toContainText(/made \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC/);
  const stranger = await (await browser.newContext()).newPage();
  await openHydrated(stranger, sharePath);
  await expect(stranger.locator('#judge-line')).toContainText('offline rubric judge (no LLM)');
  // The shared page's frame and the reports' group of the WASM: not the
  // graph explorer's.
  expect(await wasmGroups(stranger)).toEqual(['report', 'share']);
  expect(await expectPlot(stranger, 'box')).toContain('bm25 vs lightrag');
  // The drill-down too, read through the link, without the call logs (#39).
  await stranger.locator('#drill a.chip', { hasText: 'bm25 vs lightrag' }).click();
  await expect(stranger.locator('table.drill-questions tbody tr')).toHaveCount(6);
  await stranger.locator('table.drill-questions tbody tr').first().locator('a').click();
  await expect(stranger.locator('#drill-question table.judgments tbody tr')).toHaveCount(12);
  await expect(stranger.locator('#drill-question').getByRole('button', { name: 'Calls' })).toHaveCount(0);
  await expect(stranger.locator('#share-panel')).toHaveCount(0);
  await expect(stranger.locator('a[href^="/projects/"]')).toHaveCount(0);
  const html = await stranger.request.get(await stranger.locator('.downloads a', { hasText: 'One HTML file' }).getAttribute('href'));
  expect(await html.text()).toContain('<svg');
  // The paper view through the link: Figs. 14–17, each caption naming its
  // statistic, Fig. 17's level panels drawn; and back to the full report.
  await stranger.locator('#to-paper').click();
  await expect(stranger).toHaveURL(/\?view=paper$/);
  await expect(stranger.locator('body[data-hydrated="true"]')).toBeAttached();
  for (const fig of ['#fig14', '#fig15', '#fig16', '#fig17']) await expect(stranger.locator(fig)).toBeVisible();
  await expect(stranger.locator('#fig14 .caption')).toContainText("each rate's own");
  await expect(stranger.locator('#fig14-table tbody tr')).toHaveCount(1);
  await expect(stranger.locator('#fig14-table tbody td').nth(6)).toHaveText(/^#\d+: \d+% · \d+% · \d+% \((0\.00|[+-]\d\.\d\d)\)$/);
  await expect(stranger.locator('#fig16 .caption')).toContainText('of the median trial');
  const node = await expectPlot(stranger, 'paper-level-0');
  expect(node).toContain('Per question level: node');
  expect(node).toContain('mean of the pairs');
  await expect(stranger.locator('#pair-table')).toHaveCount(0);
  await stranger.locator('#to-report').click();
  await expect(stranger.locator('#pair-table')).toBeVisible();
  await page.locator('table.shares button', { hasText: 'Withdraw' }).click();
  await expect(page.locator('table.shares')).toContainText('withdrawn');
  const gone = await stranger.goto(sharePath);
  expect(gone.status()).toBe(404);
  await expect(stranger.locator('#plan-from-pilot')).toHaveCount(0);

  // The Evaluations form plans from the finished evaluation (#43): its
  // question set × the form's M, beside the price; nothing is started.
  await openHydrated(page, `/projects/${project}/evaluations`);
  await page.locator('#decide summary').click();
  await expect(page.locator('#decide-pilot option')).toHaveCount(1);
  await page.locator('#evaluation-form input[name="req[trials]"]').fill('10');
  await page.locator('#decide input[name="half_width"]').fill('0.1');
  // Enter in the plan's fields simulates; it does not start an evaluation.
  await page.locator('#decide input[name="half_width"]').press('Enter');
  const fromForm = page.locator('#decide .decide-plan');
  await expect(fromForm).toContainText('The run asked for: 6 questions × M = 10.');
  await expect(fromForm.locator('table.decide-table thead th')).toHaveText(['Questions', 'M = 1', 'M = 5', 'M = 10']);
  await expect(fromForm.locator('.decide-needs')).toContainText(/^For ±0\.1: M = 1: /);
  await expect(page.locator('table.evaluations tbody tr')).toHaveCount(1);
});

test('a jury of judges from the form: priced per judge, each judge and their agreement on the report (#43)', async ({ page }) => {
  const { project } = withAnswers('Jury demo');
  await openHydrated(page, `/projects/${project}/evaluations`);
  const form = page.locator('#evaluation-form');
  await form.locator('#judge-select').selectOption('simulated');
  await form.locator('input[name="req[trials]"]').fill('2');
  await form.locator('#jury').fill('simulated:position=1.5,noise=1; offline');
  // 6 questions × (2 trials × 2 repeats × 2 orders × 3 judges + 1 legacy verdict).
  const judging = page.locator('#evaluation-price .plan-stages tr', { hasText: 'evaluation: judging' });
  await expect(judging.locator('td').nth(1)).toHaveText('150');
  await expect(judging).toContainText('× 3 judges (a jury: simulated:position=0.3,length=0.1,noise=0.5,seed=0; simulated:position=1.5,length=0.1,noise=1,seed=1; offline)');
  await page.locator('#start-evaluation').click();
  const row = page.locator('table.evaluations tbody tr').first();
  await expect(row).toContainText('a jury of 3');
  await expect(row.locator('[class*="status-"]')).toHaveText('done', { timeout: 60_000 });
  await row.locator('a').first().click();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  const jury = page.locator('#jury');
  await expect(jury.locator('h2')).toHaveText('A jury of 3 judges');
  const rows = jury.locator('#jury-table tbody tr');
  await expect(rows).toHaveCount(5);
  await expect(rows.nth(0).locator('td').first()).toHaveText(/^judge 1: simulated:position=0\.3/);
  await expect(rows.nth(2).locator('td').first()).toHaveText('judge 3: offline');
  await expect(rows.nth(3).locator('td').first()).toHaveText('jury (mean score)');
  await expect(rows.nth(4).locator('td').first()).toHaveText('jury (majority)');
  await expect(rows.nth(3).locator('td.jury-cell .rel')).toHaveText(/^[+-]?\d\.\d\d$/);
  await expect(jury.locator('#jury-agreement')).toContainText(/over 12 items all of them judged: Fleiss' κ (-?\d\.\d{3}|—) on the winners, Krippendorff's α (-?\d\.\d{3}|—)/);
  await expect(jury.locator('#jury-no-people')).toBeVisible();
  await expect(page.locator('#eval-settings')).toContainText('a jury of 3 judges, the headline their mean score');
});

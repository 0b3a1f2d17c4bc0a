// Studies: the owner designs a question-rating study in the browser and
// gets its links; a rater completes it on a phone-sized screen with the
// keyboard (1–5, Enter), resuming after a reload; the owner sees the
// results chart and tables; a closed study says so.
const { test, expect } = require('@playwright/test');
const { execFileSync } = require('child_process');
const path = require('path');
const { openHydrated } = require('./helpers');

const bin = process.env.ASSAY_BIN || path.resolve(__dirname, '../../target/debug/assay');
const cli = (...args) => JSON.parse(execFileSync(bin, ['--json', ...args, '--db', process.env.ASSAY_E2E_DB], {
  env: { ...process.env, ASSAY_LLM_PROVIDER: '', ASSAY_LLM_BASE_URL: '' },
}).toString());

test('design a study, rate it on a phone with keys, read the results', async ({ page, browser }) => {
  const project = cli('project', 'create', 'Study demo').id;
  cli('corpus', 'add', String(project), '--sample');
  cli('graph', 'build', String(project));
  cli('questions', 'generate', 'graph', String(project), '--node', '2', '--edge', '1', '--subgraph', '1', '--min-hops', '10');

  await openHydrated(page, `/projects/${project}/studies`);
  await expect(page.locator('#no-studies')).toBeVisible();
  const form = page.locator('#study-form');
  await form.locator('input[name="name"]').fill('Clarity check');
  await form.locator('input[data-set]').first().fill('3');
  await form.locator('input[name="req[attention_checks]"]').fill('1');
  await page.locator('#create-study').click();
  const created = page.locator('#created-links');
  await expect(created).toContainText('Study #');
  const raterPath = await created.locator('a.mono').first().getAttribute('href');
  expect(raterPath).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/s\/[0-9a-f]{48}$/);
  await expect(page.locator('section.study')).toContainText('3 questions + 1 attention checks');

  // The rater: a phone, no account, keys only after the start.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const rater = await phone.newPage();
  await openHydrated(rater, raterPath);
  await expect(rater.locator('h1')).toHaveText('Clarity check');
  await expect(rater.locator('dl.dimensions')).toContainText('Answerability');
  await rater.locator('#start-rating').tap();
  const position = rater.locator('#rater-position');
  await expect(position).toHaveText('1 of 4');
  const next = rater.locator('#rate-next');
  await expect(next).toBeDisabled();
  const question = async () => rater.locator('#rated-question').textContent();
  for (let i = 0; i < 4; i++) {
    const text = await question();
    // The attention check asks for a score: give it; otherwise 4, 5, 3.
    const asked = /please choose (\d)/.exec(text);
    const keys = asked ? [asked[1], asked[1], asked[1]] : ['4', '5', '3'];
    for (const k of keys) await rater.keyboard.press(k);
    await expect(rater.locator('button.point.chosen')).toHaveCount(3);
    await expect(next).toBeEnabled();
    if (i === 1) {
      // A reload resumes at the first unrated item, with the order kept.
      await rater.keyboard.press('Enter');
      await expect(position).toHaveText('3 of 4');
      const third = await question();
      await rater.reload();
      await expect(position).toHaveText('3 of 4');
      expect(await question()).toBe(third);
      i++;
      const again = /please choose (\d)/.exec(third);
      for (const k of (again ? [again[1], again[1], again[1]] : ['4', '5', '3'])) await rater.keyboard.press(k);
    }
    await rater.keyboard.press('Enter');
    if (i < 3) await expect(position).toHaveText(`${i + 2} of 4`);
  }
  await expect(rater.locator('#thanks')).toBeVisible();
  await rater.reload();
  await expect(rater.locator('#thanks')).toBeVisible();
  // Clearing the page's storage makes no second rater: the HttpOnly cookie
  // brings this browser's rater back.
  await rater.evaluate(() => localStorage.clear());
  await rater.reload();
  await expect(rater.locator('#thanks')).toBeVisible();

  // The owner: results with the chart and the means.
  await page.locator('section.study a', { hasText: 'Results' }).click();
  await expect(page).toHaveURL(/\/studies\/\d+$/);
  await expect(page.locator('#study-raters')).toHaveText('1');
  await expect(page.locator('#study-open-raters')).toHaveText('1');
  await expect(page.locator('.plot[data-plot="study"] svg')).toContainText('Comprehensibility');
  const means = page.locator('table.study-table').first().locator('td.mean');
  await expect(means).toHaveText(['4.00', '5.00', '3.00']);
  const csv = await page.request.get(await page.locator('a', { hasText: 'All ratings (CSV)' }).getAttribute('href'));
  expect((await csv.text()).trim().split('\n').length).toBe(1 + 4 * 3);
  // One rater: no interval, said why, with n beside the mean (#24).
  const first = page.locator('table.study-table').first().locator('tbody tr').first();
  await expect(first.locator('td.ci')).toHaveText('— (needs 3 raters)');
  await expect(first.locator('td').nth(2)).toHaveText('3 (1 rater)');

  // While raters work the results follow without a reload (#24): two more
  // raters, far apart (all 1s, all 5s), and the interval appears, inside the scale.
  const rateAll = async (key) => {
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const r = await ctx.newPage();
    await openHydrated(r, raterPath);
    await r.locator('#start-rating').tap();
    for (let i = 0; i < 4; i++) {
      // Read the item only once it is shown (the attention check asks for its own score).
      await expect(r.locator('#rater-position')).toHaveText(`${i + 1} of 4`);
      const text = await r.locator('#rated-question').textContent();
      const asked = /please choose (\d)/.exec(text);
      for (let d = 0; d < 3; d++) await r.keyboard.press(asked ? asked[1] : key);
      await expect(r.locator('button.point.chosen')).toHaveCount(3);
      await r.keyboard.press('Enter');
    }
    await expect(r.locator('#thanks')).toBeVisible();
    await ctx.close();
  };
  await page.evaluate(() => { window.__sameDocument = true; });
  await rateAll('1');
  await expect(page.locator('#study-raters')).toHaveText('2', { timeout: 10_000 });
  await rateAll('5');
  await expect(page.locator('#study-raters')).toHaveText('3', { timeout: 10_000 });
  expect(await page.evaluate(() => window.__sameDocument)).toBe(true);
  await expect(first.locator('td').nth(2)).toHaveText('9 (3 raters)');
  // [4,4,4,1,1,1,5,5,5]: 3.33 ± t(0.975, 8) · 1.803 / 3 (scipy.stats.t.interval: 1.948 to 4.719).
  await expect(first.locator('td.mean')).toHaveText('3.33');
  await expect(first.locator('td.ci')).toHaveText('1.95–4.72');

  // Closed: a new rater is told so.
  await page.goto(`/projects/${project}/studies`);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await page.locator('section.study button', { hasText: 'Close the study' }).click();
  await expect(page.locator('section.study .badge')).toHaveText('closed');
  const other = await (await browser.newContext()).newPage();
  await openHydrated(other, raterPath);
  await expect(other.locator('#study-closed')).toBeVisible();

  // Per-rater links only: no open link is made.
  await form.locator('input[name="name"]').fill('Invited raters');
  await form.locator('input[data-set]').first().fill('2');
  await form.locator('input[name="req[rater_links]"]').fill('2');
  await form.locator('input[name="req[no_open_link]"]').check();
  await page.locator('#create-study').click();
  await expect(created).toContainText('No open link');
  await expect(created.locator('details li')).toHaveCount(2);
});

test('validate answers: pick the kind, rate answers and categories by tapping, compare with the LLM rater', async ({ page, browser }) => {
  const project = cli('project', 'create', 'Answer study').id;
  cli('corpus', 'add', String(project), '--sample');
  cli('questions', 'generate', 'hierarchical', String(project), '--per-category', '1', '--levels', '2,4', '--dimensions', 'QC');

  await openHydrated(page, `/projects/${project}/studies`);
  const form = page.locator('#study-form');
  await expect(form.locator('#study-answers')).toBeHidden();
  await form.locator('#study-kind').selectOption('answers');
  await expect(form.locator('input[name="name"]')).toHaveValue('Answer validation');
  await expect(form.locator('#study-answers')).toBeVisible();
  await expect(form.locator('#study-dimensions')).toHaveValue(/"name": "Hallucination"/);
  await expect(form.locator('input[type="number"][name="req[attention_checks]"]')).toBeDisabled();
  await form.locator('input[data-set]').first().fill('2');
  await page.locator('#create-study').click();
  const created = page.locator('#created-links');
  await expect(created).toContainText('Study #');
  const raterPath = await created.locator('a.mono').first().getAttribute('href');
  await expect(page.locator('section.study').first()).toContainText('answer validation · 2 question–answer pairs');

  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const rater = await phone.newPage();
  await openHydrated(rater, raterPath);
  await expect(rater.locator('dl.dimensions')).toContainText('Hallucination (0–2)');
  await rater.locator('#start-rating').tap();
  for (let i = 0; i < 2; i++) {
    // The item shown is this one (not the last, still on screen) before any tap.
    await expect(rater.locator('#rater-position')).toHaveText(`${i + 1} of 2`);
    await expect(rater.locator('button.point.chosen')).toHaveCount(0);
    await expect(rater.locator('#rated-answer')).not.toBeEmpty();
    await expect(rater.locator('#rated-passage')).toBeVisible();
    const scales = rater.locator('fieldset.scale');
    await expect(scales).toHaveCount(4);
    await scales.nth(0).locator('button.point[data-value="3"]').tap();
    await scales.nth(1).locator('button.point[data-value="0"]').tap();
    await scales.nth(2).locator('button.point[data-value="2"]').tap();
    // The category: its choices carry their definitions; pick the first.
    const choices = scales.nth(3).locator('button.point');
    expect(await choices.count()).toBeGreaterThanOrEqual(2);
    await expect(choices.first().locator('.about')).not.toBeEmpty();
    await choices.first().tap();
    await rater.locator('#rate-next').tap();
  }
  await expect(rater.locator('#thanks')).toBeVisible();

  await page.locator('section.study a', { hasText: 'Results' }).first().click();
  await expect(page.locator('#answer-source')).toContainText('reference answers');
  const means = page.locator('table.study-table').first().locator('td.mean');
  await expect(means).toHaveText(['3.00', '0.00', '2.00']);
  await expect(page.locator('#category-agreement tbody tr').first()).toContainText('all');
  await expect(page.locator('#no-llm-rating')).toBeVisible();
  await page.locator('#rate-with-llm').click();
  await expect(page.locator('#llm-rating')).toContainText('(done, 2/2)', { timeout: 30_000 });
  await expect(page.locator('#llm-rating')).toContainText('offline (no LLM)');
  await expect(page.locator('#llm-agreement tbody tr')).toHaveCount(4);
  await expect(page.locator('.banner.offline')).toContainText('not from a language model');
});

test('import the HieraRAG authors\' human judging: their files become a study that shows their figures', async ({ page }) => {
  const project = cli('project', 'create', 'Their judging').id;
  const dir = path.join(__dirname, '../../engine/tests/fixtures/hierarag_human');
  const books = ['annotator_1', 'annotator_3'].map(a => path.join(dir, `completed_human/COMPLETED_annotation_batch_${a}_HYBRID.xlsx`));
  const others = ['annotate_files/shared_questions_list.csv', 'complete_analysis_results.json',
    'human_annotation_results_summary.json', 'correlation_stat.txt'].map(f => path.join(dir, f));

  await openHydrated(page, `/projects/${project}/studies`);
  await page.locator('#import-judging summary').click();
  const form = page.locator('#import-judging-form');
  // One annotator's workbook: refused, with the reason, nothing made.
  await form.locator('input[name="files"]').setInputFiles([books[0], ...others]);
  await form.getByRole('button', { name: 'Import' }).click();
  await expect(page.locator('#import-judging-error')).toContainText('agreement needs two annotators');
  await expect(page.locator('#no-studies')).toBeVisible();

  await page.locator('#import-judging-form input[name="files"]').setInputFiles([...books, ...others]);
  await page.locator('#import-judging-form').getByRole('button', { name: 'Import' }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${project}/studies/\\d+`));
  await expect(page.locator('#imported-report')).toContainText('imported 110 questions rated by 2 annotators');
  await expect(page.locator('#answer-source')).toContainText("the HieraRAG authors' reference answers, as their annotators judged them (imported)");
  const figures = page.locator('#judging-figures');
  // Their summary file's κ of answer correctness, as their script computes it and as the file holds it.
  const kappa = figures.locator('tr[data-figure="iaa_correctness"]');
  await expect(kappa.locator('td.as-published')).toHaveText('0.4714');
  await expect(kappa.locator('td.authors')).toHaveText('0.4714');
  await expect(figures.locator('tr[data-figure="category_combined_agreement"] td.as-published')).toHaveText('28.5714');
  await expect(page.locator('#study-agreement')).toContainText('Correctness');
  await expect(page.locator('#category-agreement')).toBeVisible();
  await expect(page.locator('#judging-csv')).toHaveAttribute('href', /judging\.csv$/);
});

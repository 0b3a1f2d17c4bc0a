// The "New experiment" wizard: the papers' defaults pre-filled, an
// estimate of calls before anything runs that follows the choices, a bad
// choice refused naming the key, the manifest exported and imported back;
// a small offline experiment started from it runs every stage in one
// progress view to its report (corpus and graph, question sets, cost per
// stage and method, sanity checks, the evaluation's box plots and heatmap),
// and a share link opens the report with no session.
const { test, expect } = require('@playwright/test');
const { openHydrated, int, wasmGroups, wasmInitiators } = require('./helpers');

test('the wizard runs a small offline experiment to its report and shares it', async ({ page, browser }) => {
  test.setTimeout(240_000);
  // One measured call (Settings → Test connection) gives the wizard a latency to estimate time from.
  await openHydrated(page, '/settings');
  await page.getByRole('button', { name: 'Test connection' }).click();
  await expect(page.locator('#test-result')).toContainText('replied');
  await openHydrated(page, '/');
  await page.locator('#new-experiment-link').click();
  await expect(page).toHaveURL(/\/experiments\/new$/);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();

  // Seed 000's defaults, and their estimate: 6 pairs × 150 graph questions × 25 × 2 × 2 verdicts.
  await expect(page.locator('#x-node')).toHaveValue('50');
  await expect(page.locator('#x-trials')).toHaveValue('25');
  await expect(page.locator('#x-repeats')).toHaveValue('2');
  await expect(page.locator('#x-method-bm25')).toBeChecked();
  const stages = page.locator('#estimate-stages tbody tr');
  await expect(stages.filter({ hasText: 'evaluation: questions 1, 4 methods' }).locator('td').nth(1)).toHaveText('90,000');
  await expect(page.locator('#estimate-total')).toContainText('offline');
  // Beside the calls, the time they would take from the measured latency (#24).
  await expect(page.locator('#estimate-time')).toHaveText(/^(About .+|Under a second) on this endpoint: [\d,]+ calls × [\d,]+ ms \(the mean of its last [\d,]+ answered calls\) ÷ \d+ at a time/);

  // A small experiment: 6 graph questions, 2 methods, 2 trials of 1 repeat.
  await page.locator('#x-name').fill('Wizard demo');
  await page.locator('#x-name').dispatchEvent('change');
  for (const [id, v] of [['#x-node', '2'], ['#x-edge', '2'], ['#x-subgraph', '2'], ['#x-trials', '2'], ['#x-repeats', '1']]) {
    await page.locator(id).fill(v);
    await page.locator(id).dispatchEvent('change');
  }
  await page.locator('#x-summary-q').uncheck();
  await page.locator('#x-method-fastgraphrag').uncheck();
  await page.locator('#x-method-graphrag-local').uncheck();
  // 1 pair × 6 questions × 2 trials × 1 repeat × 2 orders.
  await expect(stages.filter({ hasText: 'evaluation: questions 1, 2 methods' }).locator('td').nth(1)).toHaveText('24');
  await expect(stages.filter({ hasText: 'sanity: bm25 against itself' })).toHaveCount(1);

  // A choice that cannot run is refused naming the key, before anything starts.
  await page.locator('#x-method-lightrag').uncheck();
  await expect(page.locator('#manifest-error')).toContainText('evaluation: compare at least two [[methods]]');
  await page.locator('#x-method-lightrag').check();
  await expect(page.locator('#manifest-error')).toHaveCount(0);

  // The manifest: exported as a file, and imported back into the form.
  await page.locator('#manifest-panel summary').click();
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#export-manifest').click()]);
  const fs = require('fs');
  const exported = fs.readFileSync(await download.path(), 'utf8');
  expect(exported).toContain('name = "Wizard demo"');
  expect(exported).toContain('trials = 2');
  await page.locator('#x-node').fill('9');
  await page.locator('#x-node').dispatchEvent('change');
  await page.locator('#import-file').setInputFiles({ name: 'experiment.toml', mimeType: 'text/plain', buffer: Buffer.from(exported) });
  await expect(page.locator('#x-node')).toHaveValue('2');
  await expect(page.locator('#manifest-text')).toHaveValue(exported);
  // A manifest naming a file on the server is refused in the browser, by its key.
  await page.locator('#manifest-text').fill(exported.replace('files = ["sample"]', 'files = ["/etc/passwd"]'));
  await page.locator('#check-manifest').click();
  await expect(page.locator('#manifest-error')).toContainText('corpus.files[0]');
  await page.locator('#import-file').setInputFiles({ name: 'experiment.toml', mimeType: 'text/plain', buffer: Buffer.from(exported) });
  await expect(page.locator('#manifest-error')).toHaveCount(0);

  // The form holds each stage's settings whole (#44): what it does not
  // show is named, and kept in the manifest when a field changes.
  const hidden = exported.replace(/min_hops = \d+/, 'min_hops = 3').replace('name = "bm25"', 'name = "bm25"\ntarget_words = 120');
  await page.locator('#import-file').setInputFiles({ name: 'hidden.toml', mimeType: 'text/plain', buffer: Buffer.from(hidden) });
  await expect(page.locator('#not-shown')).toContainText('minimum hops, sampling and seed');
  await expect(page.locator('#not-shown')).toContainText('(bm25): its parameters');
  await page.locator('#x-node').fill('3');
  await page.locator('#x-node').dispatchEvent('change');
  await expect(page.locator('#manifest-text')).toHaveValue(/node = 3\n/);
  const changed = await page.locator('#manifest-text').inputValue();
  expect(changed).toContain('min_hops = 3');
  expect(changed).toContain('target_words = 120');
  await expect(page.locator('#not-shown')).toContainText('minimum hops, sampling and seed');
  // A levels field that is not numbers is named, not read as a default.
  await page.locator('#x-levels').fill('2, x');
  await page.locator('#x-levels').dispatchEvent('change');
  await expect(page.locator('#manifest-error')).toContainText('levels: "x" is not a number of categories (kept 2, 4, 8)');
  // The manifest keeps its last text, and nothing starts until the fields make one.
  await expect(page.locator('#manifest-text')).toHaveValue(/target_words = 120/);
  await expect(page.locator('#start-experiment')).toBeDisabled();
  await page.locator('#import-file').setInputFiles({ name: 'experiment.toml', mimeType: 'text/plain', buffer: Buffer.from(exported) });
  await expect(page.locator('#manifest-error')).toHaveCount(0);
  await expect(page.locator('#not-shown')).toHaveCount(0);

  // The corpus is chunked as the run will chunk it (#39: the chunker's count, not a formula's).
  const corpusHow = await stages.filter({ hasText: 'as the chunker cuts them' }).locator('td').last().textContent();
  const planned = int(corpusHow.match(/([\d,]+) chunks \(as the chunker cuts them\)/)[1]);

  // Start: one progress view for all stages, then the report, shown
  // without a reload when the run ends (#39).
  await page.locator('#start-experiment').click();
  await expect(page).toHaveURL(/\/projects\/\d+\/experiments\/\d+$/, { timeout: 15_000 });
  await expect(page.locator('#stages tbody tr.stage')).toHaveCount(1 + 1 + 1 + 2 + 2 + 1);
  await expect(page.locator('#experiment-llm')).toContainText('offline (no LLM)');
  await expect(page.locator('#stages tbody tr.stage').first()).toContainText('corpus');
  await expect(page.locator('#corpus-stats')).toBeVisible({ timeout: 180_000 });
  await expect(page.locator('#stages tr.stage-done')).toHaveCount(8);
  expect(int(await page.locator('#total-new').textContent())).toBeGreaterThan(0);
  await expect(page.locator('#corpus-stats')).toContainText('Documents');
  expect(int(await page.locator('#corpus-stats div', { hasText: 'Chunks' }).locator('dd').textContent())).toBe(planned);
  expect(int(await page.locator('#graph-nodes').textContent())).toBeGreaterThan(0);
  await expect(page.locator('#question-sets tbody tr')).toHaveCount(1);
  await expect(page.locator('#method-costs tbody tr')).toHaveCount(2);
  await expect(page.locator('#sanity-checks li')).toHaveCount(2);
  const evaluation = page.locator('section.experiment-evaluation');
  await expect(evaluation).toHaveCount(1);
  await expect(evaluation.locator('svg').first()).toBeVisible();
  await expect(evaluation.locator('table')).toContainText('bm25');
  const json = await page.request.get(await page.locator('a', { hasText: 'Every stage, its job' }).getAttribute('href'));
  expect(json.status()).toBe(200);
  const outcome = await json.json();
  expect(outcome.stages.length).toBe(8);
  expect(outcome.new_calls).toBe(int(await page.locator('#total-new').textContent()));

  // The report, opened afresh, loads the main module and its own group of
  // the split WASM (app/src/lib.rs), none of the workbench's.
  const report = await page.context().newPage();
  await openHydrated(report, page.url());
  const modules = await report.evaluate(() => performance.getEntriesByType('resource')
    .map((r) => r.name.split('/').pop()).filter((n) => n.endsWith('.wasm')));
  expect(modules).toContain('assay_bg.wasm');
  expect(await wasmGroups(report)).toEqual(['experiment']);
  // Named in the page's HTML, so fetched alongside the main module, once.
  expect(await wasmInitiators(report, 'experiment')).toEqual(['link']);
  await expect(report.locator('section.experiment-evaluation svg').first()).toBeVisible();
  await report.close();

  // Share: the report opens read-only from the link, with no session.
  await page.locator('#create-share').click();
  const link = page.locator('#share-link a');
  await expect(link).toHaveAttribute('href', /^http:\/\/127\.0\.0\.1:\d+\/share\/[0-9a-f]{48}$/);
  const sharePath = await link.getAttribute('href');
  const anonymous = await browser.newContext();
  const stranger = await anonymous.newPage();
  await openHydrated(stranger, sharePath);
  await expect(stranger.locator('h1')).toContainText('Wizard demo');
  // The shared page's frame and the experiment's group, nothing else.
  expect(await wasmGroups(stranger)).toEqual(['experiment', 'share']);
  await expect(stranger.locator('section.experiment-evaluation svg').first()).toBeVisible();
  await expect(stranger.locator('#share-panel')).toHaveCount(0);
  await expect(stranger.locator('a[href^="/projects/"]')).toHaveCount(0);
  const manifest = await stranger.request.get(await stranger.locator('a', { hasText: 'The manifest it ran' }).getAttribute('href'));
  expect(manifest.status()).toBe(200);
  expect(await manifest.text()).toContain('name = "Wizard demo"');
  await anonymous.close();

  // The next experiment planned from this one's evaluation (#43): the
  // wizard's defaults (150 graph questions × M = 25), nothing started.
  await openHydrated(page, '/experiments/new');
  await page.locator('#wizard-decide summary').click();
  await expect(page.locator('#wizard-pilot option').first()).toContainText('Wizard demo');
  await page.locator('#wizard-decide-run').click();
  const sets = page.locator('#wizard-decide h3.decide-set');
  await expect(sets.first()).toHaveText('The evaluation of question set 1');
  await expect(page.locator('#wizard-decide .decide-plan').first()).toContainText('The run asked for: 150 questions × M = 25.');
  await expect(page.locator('#wizard-decide .decide-pair').first().locator('table.decide-table tbody tr')).toHaveCount(8);
});

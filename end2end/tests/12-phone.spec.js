// Every page on a phone (390 × 844): none may scroll sideways. Wide tables
// scroll inside their own box, charts scale, the top bar wraps with the
// account links in sight. The project is made headless (the CLI on the
// same database) with one of everything: graph, questions, answers, an
// evaluation and its sanity check, hierarchical questions with a metrics
// run, a study with ratings, share links; the experiment is the wizard's
// from 11-experiment.spec.js.
const { test, expect } = require('@playwright/test');
const { execFileSync } = require('child_process');
const path = require('path');
const { openHydrated, overflow } = require('./helpers');

const bin = process.env.ASSAY_BIN || path.resolve(__dirname, '../../target/debug/assay');
const cli = (...args) => JSON.parse(execFileSync(bin, ['--json', ...args, '--db', process.env.ASSAY_E2E_DB], {
  env: { ...process.env, ASSAY_LLM_PROVIDER: '', ASSAY_LLM_BASE_URL: '' },
}).toString());

test.describe.configure({ mode: 'serial' });
test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

let urls = [];

test('one of everything, made headless', async () => {
  test.setTimeout(180_000);
  const p = String(cli('project', 'create', 'Phone demo, with a name long enough to wrap').id);
  cli('corpus', 'add', p, '--sample');
  cli('graph', 'build', p);
  const set = String(cli('questions', 'generate', 'graph', p, '--node', '3', '--edge', '2', '--subgraph', '1', '--min-hops', '10').set_id);
  for (const method of ['bm25', 'lightrag']) cli('answers', 'generate', p, '--set', set, '--method', method);
  const evaluation = cli('eval', 'run', p, '--set', set, '--methods', 'bm25,lightrag', '--judge', 'offline', '--trials', '2');
  cli('eval', 'sanity', p, '--set', set, '--method', 'bm25', '--judge', 'offline');
  const hier = String(cli('questions', 'generate', 'hierarchical', p, '--per-category', '1', '--levels', '2,4', '--dimensions', 'QC,LV').set_id);
  const hierAnswers = String(cli('answers', 'generate', p, '--set', hier, '--method', 'bm25').answers_id);
  cli('metrics', 'run', p, '--set', hier, '--answers', hierAnswers);
  const run = cli('metrics', 'list', p).at(-1).id;
  const study = cli('study', 'create', p, '--questions', `${set}:3`);
  const share = (page) => new URL(cli('share', 'create', p, '--page', page).url, 'http://x').pathname;
  urls = [
    '/', '/experiments/new', `/experiments/new?project=${p}`, '/settings', '/users',
    `/projects/${p}/corpus`,
    `/projects/${p}/graph`, `/projects/${p}/questions`, `/projects/${p}/questions?set=${hier}`,
    `/projects/${p}/answers`, `/projects/${p}/evaluations`, `/projects/${p}/evaluations/${evaluation.evaluation_id}`,
    `/projects/${p}/metrics`, `/projects/${p}/metrics/${run}`,
    `/projects/${p}/studies`, `/projects/${p}/studies/${study.study_id}`,
    `/projects/${p}/jobs`, `/projects/${p}/jobs/${evaluation.job}`,
    share(`evaluation:${evaluation.evaluation_id}`), share(`study:${study.study_id}`), share(`questions:${set}`),
    share(`metrics:${run}`), share('graph:' + p),
    new URL(study.rater_url || study.rater_urls[0], 'http://x').pathname,
    '/projects/999999/corpus', '/no/such/page',
  ];
});

test('no page scrolls sideways at 390 px (#24)', async ({ page }) => {
  test.setTimeout(300_000);
  // The wizard's experiment (11-experiment.spec.js), found from its list.
  await openHydrated(page, '/experiments/new');
  await expect(page.locator('#experiments a').first()).toBeVisible();
  const experiment = await page.locator('#experiments a').first().getAttribute('href');
  // A document of the project, and its chunks.
  await openHydrated(page, urls[5]);
  const doc = await page.locator('a[href*="/documents/"]').first().getAttribute('href');
  const all = [...urls, experiment, doc, `${doc}?view=chunks`];
  const failures = [];
  for (const url of all) {
    await page.goto(url);
    await expect(page.locator('main')).toBeVisible();
    // Let the page's data arrive and draw (charts, tables); open every
    // folded panel (forms, comparisons, call logs) so what it holds counts
    // too. (Not "network idle": a live view — an open study's results —
    // keeps one long-poll open while it waits for ratings.)
    await page.waitForLoadState('load');
    await page.waitForTimeout(800);
    await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));
    await page.waitForTimeout(200);
    const o = await overflow(page);
    if (o.scrollWidth > o.innerWidth) failures.push(`${url}: ${o.scrollWidth} px wide; ${o.wide.join('; ')}`);
  }
  expect(failures, failures.join('\n')).toEqual([]);
});

test('on a phone the account links stay in sight, outside the sideways-scrolling tabs (#24)', async ({ page }) => {
  await openHydrated(page, urls[5]);
  for (const name of ['Log out', 'Settings', 'New experiment']) {
    const link = page.getByRole(name === 'Log out' ? 'button' : 'link', { name });
    await expect(link).toBeInViewport();
  }
  // The tabs scroll in their own row; the page does not.
  await expect(page.locator('nav.tabs')).toHaveCSS('overflow-x', 'auto');
  // "New experiment" inside a project starts from the project's documents (#24).
  const name = (await page.locator('.project-name').textContent()).trim();
  await page.getByRole('link', { name: 'New experiment' }).click();
  await expect(page).toHaveURL(/\/experiments\/new\?project=\d+$/);
  await expect(page.locator('#x-corpus')).toHaveValue('project');
  await expect(page.locator('#x-corpus-project')).toHaveValue(name);
  await expect(page.locator('#x-name')).toHaveValue(`${name} experiment`);
});

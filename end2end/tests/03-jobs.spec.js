// Jobs and Settings with the offline provider: start a job, watch it reach
// 100%, open an item's call log; test the connection.
const { test, expect } = require('@playwright/test');
const { corpus, createProject, openHydrated, upload } = require('./helpers');

test.describe.configure({ mode: 'serial' });

test('start a summaries job, watch it finish, open an item\'s call log', async ({ page }) => {
  await createProject(page, 'Jobs demo');
  await page.getByRole('button', { name: 'Load the sample corpus' }).click();
  await expect(page.locator('#total-chunks')).toHaveText('5');

  await page.getByRole('link', { name: 'Jobs' }).click();
  await expect(page).toHaveURL(/\/jobs$/);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await expect(page.locator('.llm-line')).toContainText('offline (no LLM)');
  await page.getByRole('button', { name: 'Summarise every chunk' }).click();

  await expect(page).toHaveURL(/\/jobs\/\d+$/);
  await expect(page.locator('#job-progress')).toContainText('5/5 · 100%');
  await expect(page.locator('h1 .badge')).toHaveText('done');
  await expect(page.locator('#job-failed')).toHaveText('0');
  await expect(page.locator('table.items tbody tr[data-item]')).toHaveCount(5);
  // What the model did, in words (issue #22): here, nothing went wrong.
  await expect(page.locator('#job-outcome')).toHaveText(
    'Answered by offline (no LLM). No item failed, no reply was cut at max_tokens and none needed a repair turn.');

  const row = page.locator('tr[data-item]').first();
  await row.getByRole('button', { name: 'Calls' }).click();
  const call = page.locator('.call-log .call').first();
  await expect(call.locator('.meta')).toContainText('offline (no LLM) · summarise_chunk · sample 0');
  await expect(call.locator('pre.prompt')).toContainText('[system]\nYou summarise passages of a document');
  await expect(call.locator('pre.prompt')).toContainText('Passage:\n<<<');
  // The result is summarised in a line; the whole of it loads on demand.
  await expect(row.locator('td.result')).toContainText(/words\)|"/);
  await row.locator('button.whole-result').click();
  const result = (await row.locator('pre.whole-result').textContent()).trim();
  await expect(call.locator('pre.reply')).toHaveText(result);
  // The results in words and numbers.
  await expect(page.locator('#job-summary')).toContainText('5 (5 done, 0 failed)');

  // The list shows the finished job with its totals.
  await page.getByRole('link', { name: '← Jobs' }).click();
  const listed = page.locator('table.jobs tbody tr').first();
  await expect(listed.locator('.badge')).toHaveText('done');
  await expect(listed.locator('.progress-text')).toHaveText('5/5 · 100%');
});

test('settings: switch provider, see the exact error, and the key never comes back', async ({ page }) => {
  const secret = 'sk-e2e-SECRET-7f3a9';
  const bodies = [];
  page.on('response', async (r) => { try { bodies.push(await r.text()); } catch (_) { /* redirects have no body */ } });

  await openHydrated(page, '/');
  await page.getByRole('link', { name: 'Jobs demo' }).click();
  const projectUrl = page.url();
  // Settings are the server's, not a project's: in the top bar, not the tabs (#24).
  await expect(page.locator('nav.tabs')).not.toContainText('Settings');
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page).toHaveURL(/\/settings$/);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await expect(page.locator('#llm-provider')).toHaveText('offline (no LLM)');
  await page.getByRole('button', { name: 'Test connection' }).click();
  await expect(page.locator('#test-result')).toContainText('offline replied "pong (offline provider, no LLM)');

  // A new choice of provider clears the last test's result (it was for the other).
  await page.getByLabel('Provider').selectOption('openai');
  await expect(page.locator('#test-result')).toHaveCount(0);
  // `openai` with no key warns before it saves; the provider in force stays.
  await page.getByLabel('Base URL').fill('http://127.0.0.1:9/v1');
  await page.getByLabel('Model').fill('llama3.1');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator('#no-key-warning')).toContainText('No API key');
  await expect(page.getByRole('button', { name: 'Save without a key' })).toBeVisible();
  await expect(page.locator('#llm-provider')).toHaveText('offline (no LLM)');

  // An endpoint where nothing listens: the test shows the exact error.
  await page.getByLabel('API key').fill(secret);
  await expect(page.locator('#no-key-warning')).toHaveCount(0);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await expect(page.locator('#llm-provider')).toHaveText('openai · llama3.1 at http://127.0.0.1:9/v1');
  await page.getByRole('button', { name: 'Test connection' }).click();
  await expect(page.locator('#test-result')).toContainText('the call failed: connection failed:');

  // After a reload the key field is empty and only says that a key is set.
  await openHydrated(page, page.url());
  await expect(page.getByLabel('API key')).toHaveValue('');
  await expect(page.getByLabel('API key')).toHaveAttribute('placeholder', 'set; never shown. Leave empty to keep it.');
  const jobs = await page.request.get(projectUrl.replace(/\/corpus$/, '/jobs'));
  bodies.push(await jobs.text());

  // A bad value is refused by the server with a reason; nothing changes.
  await page.getByLabel('Price (USD per 1M input,output[,cached input] tokens)').fill('cheap');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('alert')).toHaveText('price must be INPUT,OUTPUT[,CACHED_INPUT] in USD per million tokens, e.g. 0.15,0.60,0.075 (not "cheap")');
  await expect(page.locator('#llm-provider')).toHaveText('openai · llama3.1 at http://127.0.0.1:9/v1');

  // Back to offline, key removed.
  await openHydrated(page, page.url());
  await page.getByLabel('Provider').selectOption('offline');
  await page.getByLabel('remove the key saved here').check();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator('#llm-provider')).toHaveText('offline (no LLM)');
  await expect(page.getByLabel('API key')).toHaveAttribute('placeholder', 'not set');

  expect(bodies.length).toBeGreaterThan(5);
  for (const body of bodies) expect(body).not.toContain(secret);
});

test('against a slow endpoint: live progress, cancel within a second, resume to 100%', async ({ page }) => {
  test.setTimeout(120_000);
  // Point the server at the mock endpoint (300 ms per call), two calls at a time.
  await createProject(page, 'Slow endpoint');
  await upload(page, [corpus('alice_in_wonderland.txt')]);
  await expect(page.locator('#total-chunks')).toHaveText('39');
  const projectUrl = page.url();
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await page.getByLabel('Provider').selectOption('openai');
  await page.getByLabel('Base URL').fill(process.env.ASSAY_E2E_MOCK_URL);
  await page.getByLabel('Model').fill('mock-model');
  await page.getByLabel('Concurrency').fill('2');
  // A local endpoint needs no key: saved after the warning.
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('button', { name: 'Save without a key' }).click();
  await expect(page.locator('#llm-provider')).toHaveText(`openai · mock-model at ${process.env.ASSAY_E2E_MOCK_URL}`);

  await openHydrated(page, projectUrl.replace(/\/corpus$/, '/jobs'));
  await expect(page.locator('.llm-line')).toContainText('openai · mock-model');
  await page.getByRole('button', { name: 'Summarise every chunk' }).click();
  await expect(page).toHaveURL(/\/jobs\/\d+$/);
  await expect(page.locator('h1 .badge')).toHaveText('running');
  // Progress moves without a reload.
  const finished = async () => Number((await page.locator('#job-progress .progress-text').textContent()).split('/')[0]);
  await expect.poll(finished, { timeout: 20_000 }).toBeGreaterThanOrEqual(4);
  await expect(page.locator('#job-progress')).toContainText('/39');

  await page.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.locator('h1 .badge')).toHaveText('cancelled', { timeout: 2_000 });
  const stopped = await finished();
  expect(stopped).toBeLessThan(39);
  await page.waitForTimeout(1500);
  await page.reload();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  expect(await finished()).toBe(stopped);

  await page.getByRole('button', { name: 'Resume' }).click();
  await expect(page.locator('#job-progress')).toContainText('39/39 · 100%', { timeout: 60_000 });
  await expect(page.locator('h1 .badge')).toHaveText('done');
  const call = page.locator('tr[data-item]').first();
  await call.getByRole('button', { name: 'Calls' }).click();
  await expect(page.locator('.call-log .meta').first()).toContainText('openai · mock-model · summarise_chunk');

  // Leave the server offline for anything after this test.
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByLabel('Provider').selectOption('offline');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator('#llm-provider')).toHaveText('offline (no LLM)');
});

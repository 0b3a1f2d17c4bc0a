// Jobs and Settings with the offline provider: start a job, watch it reach
// 100%, open an item's call log; test the connection.
const { test, expect } = require('@playwright/test');
const { createProject, openHydrated } = require('./helpers');

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

  const row = page.locator('tr[data-item]').first();
  await row.getByRole('button', { name: 'Calls' }).click();
  const call = page.locator('.call-log .call').first();
  await expect(call.locator('.meta')).toContainText('offline (no LLM) · summarise_chunk · sample 0');
  await expect(call.locator('pre.prompt')).toContainText('[system]\nYou summarise passages of a document');
  await expect(call.locator('pre.prompt')).toContainText('Passage:\n<<<');
  const result = (await row.locator('td.result').textContent()).trim();
  await expect(call.locator('pre.reply')).toHaveText(result);

  // The list shows the finished job with its totals.
  await page.getByRole('link', { name: '← Jobs' }).click();
  const listed = page.locator('table.jobs tbody tr').first();
  await expect(listed.locator('.badge')).toHaveText('done');
  await expect(listed.locator('.progress-text')).toHaveText('5/5 · 100%');
});

test('settings show the provider and test the connection', async ({ page }) => {
  await openHydrated(page, '/');
  await page.getByRole('link', { name: 'Jobs demo' }).click();
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await expect(page.locator('#llm-provider')).toHaveText('offline (no LLM)');
  await page.getByRole('button', { name: 'Test connection' }).click();
  await expect(page.locator('.ok-note')).toContainText('offline replied "pong (offline provider, no LLM)');
});

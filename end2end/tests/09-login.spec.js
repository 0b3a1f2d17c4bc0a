// The owner login: without a session every page leads to the login page,
// a wrong password is refused, the right one lands on the page asked for,
// and logging out ends it. A study link needs no login at all.
const { test, expect } = require('@playwright/test');

test.use({ storageState: { cookies: [], origins: [] } });

test('log in, land where you were going, log out', async ({ page }) => {
  await page.goto('/projects/1/corpus');
  await expect(page).toHaveURL(/\/login\?next=%2Fprojects%2F1%2Fcorpus$/);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  const form = page.locator('#login-form');
  await form.locator('input[name="name"]').fill('owner');
  await form.locator('input[name="password"]').fill('not the password');
  await page.locator('#log-in').click();
  await expect(page.locator('[role="alert"]')).toContainText('wrong name or password');
  await form.locator('input[name="password"]').fill(process.env.ASSAY_E2E_PASSWORD);
  await page.locator('#log-in').click();
  await expect(page).toHaveURL(/\/projects\/1\/corpus$/);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === 'assay_session');
  expect(session.httpOnly).toBe(true);
  expect(session.sameSite).toBe('Strict');
  await page.locator('#log-out').click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto('/');
  await expect(page).toHaveURL(/\/login/);
});

test('the owner makes a collaborator with read access to one project; the collaborator sees only it and changes nothing', async ({ browser }) => {
  const { execFileSync } = require('child_process');
  const path = require('path');
  const bin = process.env.ASSAY_BIN || path.resolve(__dirname, '../../target/debug/assay');
  const cli = (...args) => JSON.parse(execFileSync(bin, ['--json', ...args, '--db', process.env.ASSAY_E2E_DB]).toString());
  const shared = cli('project', 'create', 'Shared with ana').id;
  const secret = cli('project', 'create', 'Not for ana').id;

  const owner = await (await browser.newContext({
    storageState: { cookies: [{ name: 'assay_session', value: process.env.ASSAY_E2E_SESSION, domain: '127.0.0.1', path: '/',
      expires: -1, httpOnly: true, secure: false, sameSite: 'Strict' }], origins: [] },
  })).newPage();
  await owner.goto('/');
  await expect(owner.locator('body[data-hydrated="true"]')).toBeAttached();
  await owner.locator('#accounts-link').click();
  await expect(owner).toHaveURL(/\/users$/);
  await expect(owner.locator('body[data-hydrated="true"]')).toBeAttached();
  const form = owner.locator('#member-form');
  await form.locator('input[name="name"]').fill('ana');
  await form.locator('input[name="password"]').fill('ana password here');
  await owner.locator('#create-member').click();
  const row = owner.locator('#users tr[data-user="ana"]');
  await expect(row).toContainText('collaborator');
  await row.locator(`select[data-project="${shared}"]`).selectOption('read');
  await expect.poll(() => cli('user', 'list').find((u) => u.name === 'ana').projects).toEqual([{ project_id: shared, access: 'read' }]);

  // ana logs in: one project, read-only.
  const page = await (await browser.newContext({ storageState: { cookies: [], origins: [] } })).newPage();
  await page.goto('/login');
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await page.locator('#login-form input[name="name"]').fill('ana');
  await page.locator('#login-form input[name="password"]').fill('ana password here');
  await page.locator('#log-in').click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole('link', { name: 'Shared with ana' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Not for ana' })).toHaveCount(0);
  await page.goto(`/projects/${shared}/corpus`);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await page.getByRole('button', { name: 'Load the sample corpus' }).click();
  await expect(page.locator('[role="alert"]').first()).toContainText('may read project');
  const refused = await page.goto(`/projects/${secret}/corpus`);
  expect(refused.status()).toBe(403);
  await expect(page.locator('h1')).toHaveText('Not for you');
  expect((await page.goto('/users')).status()).toBe(403);
});

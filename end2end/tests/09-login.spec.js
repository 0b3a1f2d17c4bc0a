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

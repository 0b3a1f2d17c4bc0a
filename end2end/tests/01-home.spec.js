// The first visit: an empty home page, the sample corpus in one click, and
// proof that the page is hydrated (client-side state only WASM can drive).
const { test, expect } = require('@playwright/test');
const { openHydrated, int } = require('./helpers');

test('an empty home page offers the sample corpus, which loads in one click', async ({ page }) => {
  await openHydrated(page, '/');
  await expect(page.getByRole('heading', { name: 'No projects yet' })).toBeVisible();
  await page.getByRole('button', { name: 'Load the sample corpus' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+\/corpus$/);
  await expect(page.locator('.project-name')).toHaveText('Saltmere sample');
  await expect(page.locator('#total-documents')).toHaveText('5');
  expect(int(await page.locator('#total-tokens').textContent())).toBeGreaterThan(2500);
  await expect(page.locator('table.documents tbody tr')).toHaveCount(5);
  await expect(page.locator('tr[data-document="The Salt Guild and the Quarrel with Hollin Cross"]')).toBeVisible();
});

test('hydration: rename works in place, which only the WASM can do', async ({ page }) => {
  await openHydrated(page, '/');
  const row = page.locator('tr[data-project="Saltmere sample"]');
  await row.getByRole('button', { name: 'Rename' }).click();
  const input = row.getByLabel('New name');
  await expect(input).toBeVisible();
  await input.fill('Saltmere demo');
  await row.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator('tr[data-project="Saltmere demo"] .project-link')).toHaveText('Saltmere demo');
  await expect(page.locator('tr[data-project="Saltmere sample"]')).toHaveCount(0);
  // A duplicate name is refused with a message, and nothing changes.
  await page.getByLabel('New project').fill('saltmere DEMO');
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('alert')).toHaveText('a project named "saltmere DEMO" already exists');
  await expect(page.locator('table.projects tbody tr')).toHaveCount(1);
});

// A researcher's corpus: upload real corpora together, read the counts,
// open a document, survive a broken file, delete things.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { test, expect } = require('@playwright/test');
const { corpus, createProject, openHydrated, upload, int } = require('./helpers');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'assay-e2e-files-'));
const write = (name, content) => {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, content);
  return p;
};

test.describe.configure({ mode: 'serial' });

test('upload Alice and the UltraDomain slice together; counts add up', async ({ page }) => {
  await createProject(page, 'Alice and Mix');
  const report = await upload(page, [corpus('alice_in_wonderland.txt'), corpus('ultradomain_mix_slice5.jsonl')]);
  await expect(report).toContainText('Added 6 documents.');
  await expect(page.locator('#total-documents')).toHaveText('6');

  const rows = page.locator('table.documents tbody tr');
  await expect(rows).toHaveCount(6);
  const alice = page.locator('tr[data-document="alice in wonderland"]');
  await expect(alice.locator('td').nth(1)).toHaveText('alice_in_wonderland.txt');
  // cl100k_base tokens of the text with CRLF normalised (the engine's unit test pins the same figure).
  await expect(alice.locator('td').nth(3)).toHaveText('36,780');
  await expect(page.locator('tr[data-document="mix_ctx_22"] td').nth(1)).toHaveText('ultradomain_mix_slice5.jsonl line 1');

  // Totals are the sums of the rows.
  let tokens = 0, chunks = 0;
  for (const row of await rows.all()) {
    tokens += int(await row.locator('td').nth(3).textContent());
    chunks += int(await row.locator('td').nth(4).textContent());
  }
  await expect(page.locator('#total-tokens')).toHaveText(tokens.toLocaleString('en-US'));
  await expect(page.locator('#total-chunks')).toHaveText(chunks.toLocaleString('en-US'));
  expect(chunks).toBeGreaterThanOrEqual(Math.ceil(tokens / 1200));

  // Uploading the same file again adds nothing and says why.
  const again = await upload(page, [corpus('alice_in_wonderland.txt')]);
  await expect(again).toContainText('No documents added.');
  await expect(again).toContainText('duplicate: the project already has this text as "alice in wonderland"');
});

test('open a document: its text is shown as text, never as HTML', async ({ page }) => {
  await openHydrated(page, '/');
  await page.getByRole('link', { name: 'Alice and Mix' }).click();
  const markup = write('markup.txt', 'A <b>bold</b> claim <script>document.title="pwned"</script> & more.\n');
  const report = await upload(page, [markup]);
  await expect(report).toContainText('Added 1 document.');

  await page.getByRole('link', { name: 'markup' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('markup');
  await expect(page.locator('.document-text')).toHaveText('A <b>bold</b> claim <script>document.title="pwned"</script> & more.\n');
  await expect(page.locator('.document-text b')).toHaveCount(0);
  expect(await page.title()).not.toBe('pwned');

  await page.getByRole('link', { name: '← Corpus' }).click();
  await page.getByRole('link', { name: 'alice in wonderland' }).click();
  await expect(page.locator('.document-text')).toContainText('Alice was beginning to get very tired of sitting by her sister');
  await expect(page.locator('.meta')).toContainText('36,780 tokens');
});

test('a broken file is refused by name while the good files in the same upload are stored', async ({ page }) => {
  await openHydrated(page, '/');
  await page.getByRole('link', { name: 'Alice and Mix' }).click();
  await expect(page.locator('#total-documents')).toHaveText('7');
  const broken = write('broken.jsonl', '{"id": "ok", "context": "fine"}\n{"id": "bad", "context": \n');
  const latin1 = write('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  const good = write('notes.md', '# Field notes\n\nThe Hatter and the March Hare were having tea.\n');
  const report = await upload(page, [broken, latin1, good]);
  await expect(report).toContainText('Added 1 document.');
  await expect(report.locator('.skipped li')).toHaveCount(2);
  await expect(report.locator('.skipped li').filter({ hasText: 'broken.jsonl' })).toContainText('malformed line 2');
  await expect(report.locator('.skipped li').filter({ hasText: 'latin1.txt' })).toContainText('not UTF-8 text');
  await expect(page.locator('#total-documents')).toHaveText('8');
  await expect(page.locator('tr[data-document="Field notes"]')).toBeVisible();
  await expect(page.locator('tr[data-document="alice in wonderland"]')).toBeVisible();
});

test('delete a document, then the project, with confirmation', async ({ page }) => {
  await openHydrated(page, '/');
  await page.getByRole('link', { name: 'Alice and Mix' }).click();
  const doc = page.locator('tr[data-document="markup"]');
  await doc.getByRole('button', { name: 'Delete…' }).click();
  await expect(doc.getByRole('alertdialog')).toContainText('Delete "markup" and its chunks?');
  await doc.getByRole('button', { name: 'Delete', exact: true }).click();
  await expect(page.locator('tr[data-document="markup"]')).toHaveCount(0);
  await expect(page.locator('#total-documents')).toHaveText('7');

  await openHydrated(page, '/');
  const row = page.locator('tr[data-project="Alice and Mix"]');
  await row.getByRole('button', { name: 'Delete…' }).click();
  await expect(row.getByRole('alertdialog')).toContainText('Delete this project and its 7 documents?');
  await row.getByRole('button', { name: 'Cancel' }).click();
  await expect(row.getByRole('alertdialog')).toHaveCount(0);
  await row.getByRole('button', { name: 'Delete…' }).click();
  await row.getByRole('button', { name: 'Delete', exact: true }).click();
  await expect(page.locator('tr[data-project="Alice and Mix"]')).toHaveCount(0);
  // Its pages are gone too.
  await page.goto('/projects/2/corpus');
  await expect(page.getByRole('alert').first()).toContainText('no project with id 2');
});

test('a large upload shows a progress bar while it travels', async ({ page }) => {
  await createProject(page, 'Progress');
  // Throttle uploads to 256 KB/s so the 574 KB Sherlock Holmes file takes a few seconds.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: 256 * 1024,
  });
  await page.locator('#upload-input').setInputFiles([corpus('sherlock_holmes.txt')]);
  const line = page.locator('.progress-line');
  await expect(line.locator('progress')).toBeVisible();
  await expect(line).toContainText(/Uploading 1 file: \d+% of 561\.\d KB|Reading, tokenising and chunking 1 file/);
  await expect(page.locator('.report')).toContainText('Added 1 document.', { timeout: 60_000 });
  await expect(line).toHaveCount(0);
  await expect(page.locator('#total-documents')).toHaveText('1');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
});

test('files dropped on the drop zone are uploaded', async ({ page }) => {
  await createProject(page, 'Dropped');
  const transfer = await page.evaluateHandle(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['# Dropped note\n\nThe Cheshire Cat grinned from the branch.\n'], 'dropped.md', { type: 'text/markdown' }));
    dt.items.add(new File(['[1, 2]'], 'numbers.json', { type: 'application/json' }));
    return dt;
  });
  await page.dispatchEvent('.dropzone', 'dragover', { dataTransfer: transfer });
  await expect(page.locator('.dropzone')).toHaveClass(/dragging/);
  await page.dispatchEvent('.dropzone', 'drop', { dataTransfer: transfer });
  const report = page.locator('.report');
  await expect(report).toContainText('Added 1 document.');
  await expect(report.locator('.skipped li')).toHaveText('numbers.json: malformed item 1: expected an object with a "context" field, found a number');
  await expect(page.locator('.dropzone')).not.toHaveClass(/dragging/);
  await expect(page.locator('tr[data-document="Dropped note"]')).toBeVisible();
});

test('changing the chunk size re-chunks the corpus', async ({ page }) => {
  await openHydrated(page, '/');
  await page.getByRole('link', { name: 'Progress' }).click();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  const before = int(await page.locator('#total-chunks').textContent());
  await page.locator('details.chunking summary').click();
  await page.getByLabel('Chunk size').fill('512');
  await page.getByLabel('Overlap').fill('50');
  await page.getByRole('button', { name: 'Apply and re-chunk' }).click();
  await expect(page.locator('.totals')).toContainText('512 tokens, 50 overlap');
  const after = int(await page.locator('#total-chunks').textContent());
  expect(after).toBeGreaterThan(before * 2);
  // A bad setting is refused with the reason, and the corpus keeps its chunks.
  await openHydrated(page, page.url());
  await expect(page.getByLabel('Chunk size')).toHaveValue('512');
  await page.locator('details.chunking summary').click();
  await page.getByLabel('Overlap').fill('400');
  await page.getByRole('button', { name: 'Apply and re-chunk' }).click();
  await expect(page.getByRole('alert')).toHaveText('chunk_overlap: must be smaller than half the chunk size (255 tokens at most), not 400');
  await expect(page.locator('#total-chunks')).toHaveText(after.toLocaleString('en-US'));
});

import { chromium } from 'playwright-core';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
page.on('response', async r => { if (r.url().includes('graph_view')) { const t = await r.text(); console.log(r.url(), t.slice(0, 400)); } });
await page.goto(process.argv[2]);
await page.waitForTimeout(2000);
await browser.close();

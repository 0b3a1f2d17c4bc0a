// Browser tests: Playwright (playwright-core) driving Debian's Chromium
// (/usr/bin/chromium) against a real `assay serve` on a fresh SQLite file.
// scripts/test builds the binary first and passes its path in ASSAY_BIN.
const fs = require('fs');
const os = require('os');
const path = require('path');

const port = process.env.ASSAY_E2E_PORT || '3187';
const bin = process.env.ASSAY_BIN || path.resolve(__dirname, '../target/debug/assay');
// An OpenAI-compatible mock answering in 300 ms, for tests of live progress.
const mockPort = process.env.ASSAY_E2E_MOCK_PORT || '3189';
const mockBin = process.env.ASSAY_MOCK_BIN || path.resolve(path.dirname(bin), 'mockllm');
process.env.ASSAY_E2E_MOCK_URL = `http://127.0.0.1:${mockPort}/v1`;
// Set once in the main process; workers inherit it.
process.env.ASSAY_E2E_DB ||= path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'assay-e2e-')), 'e2e.db');
// The owner account, and a logged-in session every test starts with
// (09-login.spec.js starts without it). Made once, before the server starts.
process.env.ASSAY_E2E_PASSWORD ||= 'e2e owner password';
if (!process.env.ASSAY_E2E_SESSION) {
  const { execFileSync } = require('child_process');
  const run = (args, input) => execFileSync(bin, [...args, '--db', process.env.ASSAY_E2E_DB], { input }).toString();
  run(['user', 'create', 'owner', '--password-stdin'], process.env.ASSAY_E2E_PASSWORD + '\n');
  process.env.ASSAY_E2E_SESSION = run(['user', 'session', 'owner']).trim();
}

module.exports = {
  testDir: './tests',
  globalTeardown: './teardown.js',
  timeout: 90_000,
  expect: { timeout: 20_000 },
  workers: 1,
  retries: 0,
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
             '--disable-component-update', '--disable-sync'],
    },
    storageState: {
      cookies: [{ name: 'assay_session', value: process.env.ASSAY_E2E_SESSION, domain: '127.0.0.1', path: '/',
                  expires: -1, httpOnly: true, secure: false, sameSite: 'Strict' }],
      origins: [],
    },
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
  },
  webServer: [
    {
      command: `"${bin}" serve --addr 127.0.0.1:${port} --db "${process.env.ASSAY_E2E_DB}" --max-upload-mb 20`,
      url: `http://127.0.0.1:${port}/`,
      reuseExistingServer: false,
      timeout: 60_000,
      stdout: 'pipe',
      stderr: 'pipe',
    },
    {
      command: `"${mockBin}" 127.0.0.1:${mockPort} 300`,
      port: Number(mockPort),
      reuseExistingServer: false,
      timeout: 30_000,
    },
  ],
};

// Opens a speedscope file in speedscope's web app (its npm package) in headless Chromium, as a
// user would, and reports what the page shows (tests/tests/browser.rs):
//
//   node speedscope.js PROFILE.json SCREENSHOT.png [CHROMIUM]
//
// Serves the app and the profile on 127.0.0.1 (speedscope fetches `#profileURL=`), waits for
// the flame chart's canvas, switches to the Sandwich view (key 3: a table of every function
// with its total and self time), saves a screenshot and prints one JSON line:
// {"title": the profile's name in the toolbar, "text": the page's text, "errors": [uncaught
// page errors]}. Exits 1 if the page never shows a profile.
const http = require('http');
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const [profile, screenshot, executable = '/usr/bin/chromium'] = process.argv.slice(2);
if (!profile || !screenshot) {
  console.error('usage: node speedscope.js PROFILE.json SCREENSHOT.png [CHROMIUM]');
  process.exit(2);
}
const app = path.join(__dirname, 'node_modules', 'speedscope', 'dist', 'release');
const types = {
  '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
  '.json': 'application/json', '.wasm': 'application/wasm', '.png': 'image/png',
};

const server = http.createServer((req, res) => {
  const url = decodeURIComponent(req.url.split('?')[0]);
  const file = url === '/profile.json' ? profile
    : path.join(app, path.normalize(url === '/' ? 'index.html' : url).replace(/^(\.\.[/\\])+/, ''));
  fs.readFile(file, (err, data) => {
    if (err) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    res.end(data);
  });
});

async function main() {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  // --no-sandbox: CI runs the tests as root, where Chromium's sandbox refuses to start.
  const browser = await chromium.launch({ executablePath: executable, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(`${base}/profile.json`)}`);
    await page.waitForSelector('canvas', { timeout: 30000 });
    await page.keyboard.press('3');
    await page.waitForFunction(() => document.body.innerText.includes('Symbol Name'), null,
      { timeout: 30000 });
    const text = await page.innerText('body');
    await page.screenshot({ path: screenshot });
    console.log(JSON.stringify({ title: await page.title(), text, errors }));
  } finally {
    await browser.close();
    server.close();
  }
}

main().catch((e) => {
  console.error(`speedscope.js: ${e.message}`);
  server.close();
  process.exit(1);
});

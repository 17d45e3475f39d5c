'use strict';
// node: the kneebench "node" fixture -- the `http` module, one process, no framework,
// no cluster.
//
// It serves the contract's routes (contract/contract.json): GET /plaintext and GET /json,
// 404 for any other path, 405 with "Allow: GET" for a known path with another method.
// Every response carries Content-Type, Content-Length, Date (node adds it) and Server, and
// keeps the connection alive.
const http = require('http');

const SERVER = 'node';
const PLAINTEXT = Buffer.from('Hello, World!', 'latin1');
const NOT_FOUND = Buffer.from('Not Found', 'latin1');
const NOT_ALLOWED = Buffer.from('Method Not Allowed', 'latin1');

function parseArgs(argv) {
  const opts = { port: 8082, bind: '127.0.0.1' };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if ((flag === '--port' || flag === '--bind') && value === undefined) {
      throw new Error(`${flag} needs a value`);
    }
    if (flag === '--port') {
      opts.port = Number(value);
      if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
        throw new Error(`bad --port ${value}`);
      }
      i++;
    } else if (flag === '--bind') {
      opts.bind = value;
      i++;
    } else {
      throw new Error(`unknown argument ${flag}`);
    }
  }
  return opts;
}

// One writeHead with every header set explicitly, so no route is ever sent chunked.
function send(res, status, contentType, body, extra) {
  const headers = {
    'Content-Type': contentType,
    'Content-Length': body.length,
    'Server': SERVER,
  };
  if (extra) Object.assign(headers, extra);
  res.writeHead(status, headers);
  res.end(body);
}

function handle(req, res) {
  // The path is the target up to any query string, matching the other fixtures.
  const q = req.url.indexOf('?');
  const path = q === -1 ? req.url : req.url.slice(0, q);
  if (path !== '/plaintext' && path !== '/json') {
    send(res, 404, 'text/plain', NOT_FOUND);
    return;
  }
  if (req.method !== 'GET') {
    send(res, 405, 'text/plain', NOT_ALLOWED, { 'Allow': 'GET' });
    return;
  }
  if (path === '/plaintext') {
    send(res, 200, 'text/plain', PLAINTEXT);
    return;
  }
  // Serialised from a fresh object on every request, as the contract asks.
  send(res, 200, 'application/json', Buffer.from(JSON.stringify({ message: 'Hello, World!' })));
}

function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`node server: ${e.message}\n`);
    process.exit(2);
  }
  const server = http.createServer(handle);
  // Idle keep-alive connections live as long as nginx's default (75 s) instead of node's
  // 5 s, so a paused load generator finds its connections where it left them.
  server.keepAliveTimeout = 75000;
  server.headersTimeout = 76000;
  server.on('error', (e) => {
    process.stderr.write(`node server: ${e.message}\n`);
    process.exit(1);
  });
  // A signal is a clean stop.
  for (const sig of ['SIGTERM', 'SIGINT']) {
    process.on(sig, () => {
      server.close();
      process.exit(0);
    });
  }
  server.listen(opts.port, opts.bind);
}

main();

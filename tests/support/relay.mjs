// Helpers for "the proxy is transparent" assertions: the same request sent
// straight to the fake upstream and through tokendiet must give the same
// status, the same end-to-end headers and the same body bytes.
import assert from 'node:assert/strict';
import {rawRequest, endToEndHeaders} from './http.mjs';

// Headers tokendiet may add on its own (F25 reports what it did).
const OWN = /^x-tokendiet-/i;

export function comparable(res) {
  return endToEndHeaders(res.rawHeaders).filter(([k]) => !OWN.test(k));
}

// Sends `req` to both ports; asserts equality; returns {direct, proxied}.
export async function sameThroughProxy(req, {directPort, proxyPort, label = req.path}) {
  const direct = await rawRequest({...req, port: directPort});
  const proxied = await rawRequest({...req, port: proxyPort});
  assert.equal(direct.complete, true, `${label}: direct response incomplete (${direct.error})`);
  assert.equal(proxied.complete, true, `${label}: proxied response incomplete (${proxied.error})`);
  assert.equal(proxied.status, direct.status, `${label}: status`);
  assert.deepEqual(comparable(proxied), comparable(direct), `${label}: end-to-end headers`);
  assert.ok(proxied.body.equals(direct.body),
    `${label}: body differs (${proxied.body.length} vs ${direct.body.length} bytes)\n--- proxied\n${proxied.body.toString().slice(0, 400)}\n--- direct\n${direct.body.toString().slice(0, 400)}`);
  return {direct, proxied};
}

// Everything the integration and e2e tests share: the fake upstream (in
// process or as a child), the tokendiet process, a raw HTTP client, fixtures.
export {startFakeUpstream, classify} from '../fake_upstream/server.mjs';
export {loadFixture, fixtureNames, sseEvents, sseData, usageOf, stripOpenAIUsage, FIXTURES_DIR} from '../fake_upstream/fixtures.mjs';
export {rawRequest, Connection, buildRequest, endToEndHeaders, HOP_BY_HOP} from './http.mjs';
export {startTokendiet, startFakeAndProxy, startFakeProcess, startRecallTestProxy, tokendietBin, freePort, tempDir, tcpSocketsOf, letterChatBody, SOURCE_DIR, FAKE_SERVER} from './processes.mjs';
export {makeTestCA} from './tls.mjs';
export {sameThroughProxy, comparable} from './relay.mjs';
export {quotaConfig, trajectory, fillerBody, fakeTokens, post, explain, logLineOf, metricSamples, metricSamplesAfter, metricSum} from './quota.mjs';
export {recordedHistory, fixtureText, agentRequest} from './agent_bodies.mjs';
export {loadThenKill, ledgerSessions} from './ledger_kill.mjs';
export {startRedis} from './redis.mjs';

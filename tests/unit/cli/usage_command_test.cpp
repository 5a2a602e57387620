#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <fstream>
#include <sstream>

#include "cli/usage_command.hpp"
#include "ledger/ledger_store.hpp"
#include "rows.hpp"
#include "temp_dir.hpp"

using namespace td;
using td::test::sample_row;
using td::test::TempDir;

namespace {

struct Run {
  int status;
  std::string out, err;
};

Run run(std::vector<std::string> args, std::int64_t now_ms) {
  std::ostringstream out, err;
  int status = cli::usage_run(args, out, err, now_ms);
  return {status, out.str(), err.str()};
}

// A ledger with 2 gpt-4o rows on day 1 and one claude row on day 2.
struct Fixture {
  TempDir tmp;
  std::string ledger = tmp.file("usage.db");
  std::string config = tmp.file("tokendiet.yaml");
  std::int64_t day1 = sample_row(0).time_ms;
  std::int64_t now = day1 + 2 * 86'400'000;

  Fixture() {
    auto opened = ledger::LedgerStore::open(ledger, ledger::LedgerStore::Access::ReadWrite);
    REQUIRE(opened.store);
    std::vector<ledger::LedgerRow> rows = {sample_row(0), sample_row(1), sample_row(2, "claude-x")};
    rows[2].time_ms = day1 + 86'400'000;
    rows[2].provider = "anthropic";
    REQUIRE(opened.store->insert(rows).empty());
    std::ofstream(config) << "prices:\n"
                             "  - {model: \"gpt-4o*\", input: 2.5, cached_input: 1.25, output: 10}\n";
  }
};

}  // namespace

TEST_CASE("usage --json: groups, totals and prices from the config") {
  Fixture f;
  Run r = run({"--ledger", f.ledger, "--config", f.config, "--json"}, f.now);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  rapidjson::Document doc;
  REQUIRE_FALSE(doc.Parse(r.out.c_str()).HasParseError());
  REQUIRE(doc["groups"].Size() == 2);
  const auto& gpt = doc["groups"][0];
  CHECK(std::string(gpt["key"].GetString()) == "gpt-4o");
  CHECK(gpt["requests"].GetInt64() == 2);
  auto a = sample_row(0), b = sample_row(1);
  CHECK(gpt["tokens_saved"].GetInt64() == a.tokens_saved() + b.tokens_saved());
  double fresh = (a.prompt_tokens - 107) + (b.prompt_tokens - 107);  // 100 cached + 7 written
  double cost = (fresh * 2.5 + 200 * 1.25 + (a.completion_tokens + b.completion_tokens) * 10) / 1e6;
  CHECK(gpt["cost_usd"].GetDouble() == doctest::Approx(cost));
  CHECK(doc["groups"][1]["unpriced_requests"].GetInt64() == 1);
  CHECK(doc["total"]["requests"].GetInt64() == 3);
}

TEST_CASE("usage: --since and --by day select and group") {
  Fixture f;
  Run r = run({"--ledger=" + f.ledger, "--by=day", "--since", "36h", "--json"}, f.now);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  rapidjson::Document doc;
  REQUIRE_FALSE(doc.Parse(r.out.c_str()).HasParseError());
  REQUIRE(doc["groups"].Size() == 1);  // only day 2 is within 36 h
  CHECK(std::string(doc["groups"][0]["key"].GetString()) == "2026-09-22");
  CHECK(doc["since_ms"].GetInt64() == f.now - 36 * 3'600'000LL);
}

TEST_CASE("usage --session: one session's requests, by its id or the start of it") {
  Fixture f;  // sessions sess-0, sess-1 (gpt-4o) and sess-2 (claude-x)
  Run r = run({"--ledger", f.ledger, "--session", "sess-1", "--json"}, f.now);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  rapidjson::Document doc;
  REQUIRE_FALSE(doc.Parse(r.out.c_str()).HasParseError());
  REQUIRE(doc["groups"].Size() == 1);
  CHECK(std::string(doc["groups"][0]["key"].GetString()) == "gpt-4o");
  CHECK(doc["total"]["requests"].GetInt64() == 1);
  CHECK(std::string(doc["session"].GetString()) == "sess-1");
  // A prefix, as a table shows a long id cut: every session starting with it.
  REQUIRE_FALSE(
      doc.Parse(run({"--ledger", f.ledger, "--session", "sess-", "--json"}, f.now).out.c_str()).HasParseError());
  CHECK(doc["total"]["requests"].GetInt64() == 3);
  Run none = run({"--ledger", f.ledger, "--session", "nope"}, f.now);
  CHECK(none.status == 0);
  CHECK(none.out.find("session nope*") != std::string::npos);
  CHECK(none.out.find("no requests") != std::string::npos);
}

TEST_CASE("usage: human table by default") {
  Fixture f;
  Run r = run({"--ledger", f.ledger, "--config", f.config, "--by", "provider"}, f.now);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("whole ledger") != std::string::npos);
  CHECK(r.out.find("openai") != std::string::npos);
  CHECK(r.out.find("anthropic") != std::string::npos);
  CHECK(r.out.find("no price for: claude-x") != std::string::npos);
}

TEST_CASE("usage: help and errors") {
  Fixture f;
  Run help = run({"--help"}, f.now);
  CHECK(help.status == 0);
  CHECK(help.out.find("--since") != std::string::npos);
  CHECK(run({"--by", "week", "--ledger", f.ledger}, f.now).status == 2);
  CHECK(run({"--since", "soon", "--ledger", f.ledger}, f.now).status == 2);
  CHECK(run({"--frobnicate"}, f.now).status == 2);
  CHECK(run({"--ledger"}, f.now).status == 2);
  Run missing = run({"--ledger", f.tmp.file("nope.db")}, f.now);
  CHECK(missing.status == 1);
  CHECK(missing.err.find("no ledger at") != std::string::npos);
  std::ofstream(f.tmp.file("bad.yaml")) << "prices: 3\n";
  Run bad = run({"--ledger", f.ledger, "--config", f.tmp.file("bad.yaml")}, f.now);
  CHECK(bad.status == 1);
  CHECK(bad.err.find("bad.yaml:1:") != std::string::npos);
}

TEST_CASE("usage: the ledger path comes from the config when --ledger is absent") {
  Fixture f;
  std::ofstream(f.config) << "ledger:\n  path: usage.db\n";  // relative to the file
  Run r = run({"--config", f.config, "--json"}, f.now);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("\"requests\":3") != std::string::npos);
}

TEST_CASE("usage: model names and sessions from clients show their control characters as text") {
  TempDir tmp;
  const std::string ledger = tmp.file("usage.db");
  {
    auto opened = ledger::LedgerStore::open(ledger, ledger::LedgerStore::Access::ReadWrite);
    REQUIRE(opened.store);
    std::vector<ledger::LedgerRow> rows = {sample_row(0, "gpt\x1b]0;owned\x07"), sample_row(1,
                                                                                            "m\xc2\x9b"
                                                                                            "2J")};
    rows[0].session = "s\x1b[2J";
    REQUIRE(opened.store->insert(rows).empty());
  }
  const std::int64_t now = sample_row(0).time_ms + 1000;
  for (const char* by : {"model", "session"}) {
    CAPTURE(by);
    Run table = run({"--ledger", ledger, "--by", by}, now);
    REQUIRE_MESSAGE(table.status == 0, table.err);
    CHECK(table.out.find('\x1b') == std::string::npos);
    CHECK(table.out.find("\xc2\x9b") == std::string::npos);
    Run json = run({"--ledger", ledger, "--by", by, "--json"}, now);
    REQUIRE_MESSAGE(json.status == 0, json.err);
    CHECK(json.out.find("\xc2\x9b") == std::string::npos);
    rapidjson::Document doc;
    REQUIRE_FALSE(doc.Parse(json.out.c_str()).HasParseError());
  }
  Run models = run({"--ledger", ledger}, now);
  CHECK(models.out.find("gpt\\x1b]0;owned\\x07") != std::string::npos);
  CHECK(models.out.find("m\\u009b2J") != std::string::npos);
  CHECK(run({"--ledger", ledger, "--by", "session"}, now).out.find("s\\x1b[2J") != std::string::npos);
}

TEST_CASE("usage: a ledger path that is not there, or a directory, is an error naming it") {
  TempDir tmp;
  const std::int64_t now = sample_row(0).time_ms;
  Run missing = run({"--ledger", tmp.file("none.db")}, now);
  CHECK(missing.status == 1);
  CHECK(missing.err == "usage: no ledger at " + tmp.file("none.db") + ": No such file or directory\n");
  Run dir = run({"--ledger", tmp.path()}, now);
  CHECK(dir.status == 1);
  CHECK(dir.err == "usage: no ledger at " + tmp.path() + ": is a directory\n");
  Run config = run({"--ledger", tmp.path(), "--config", tmp.file("none.yaml")}, now);
  CHECK(config.status == 1);
  CHECK(config.err == tmp.file("none.yaml") + ": No such file or directory\n");
}

// One ledger per replica: the report over several is the report over one
// ledger holding all their rows; a file named twice is read once.
TEST_CASE("usage over several ledgers: summed as one, a file named twice counted once") {
  Fixture f;
  const std::string second = f.tmp.file("replica-2.db");
  {
    auto opened = ledger::LedgerStore::open(second, ledger::LedgerStore::Access::ReadWrite);
    REQUIRE(opened.store);
    std::vector<ledger::LedgerRow> rows = {sample_row(3), sample_row(4, "claude-x")};
    rows[1].time_ms = f.day1 + 86'400'000;
    rows[1].provider = "anthropic";
    REQUIRE(opened.store->insert(rows).empty());
  }
  const std::string both = f.tmp.file("both.db");
  {
    auto opened = ledger::LedgerStore::open(both, ledger::LedgerStore::Access::ReadWrite);
    REQUIRE(opened.store);
    std::vector<ledger::LedgerRow> rows = {sample_row(0), sample_row(1), sample_row(2, "claude-x"), sample_row(3),
                                           sample_row(4, "claude-x")};
    rows[2].time_ms = rows[4].time_ms = f.day1 + 86'400'000;
    rows[2].provider = rows[4].provider = "anthropic";
    REQUIRE(opened.store->insert(rows).empty());
  }
  for (const char* by : {"model", "day", "provider", "session"}) {
    CAPTURE(by);
    Run together = run({"--ledger", f.ledger, second, "--config", f.config, "--by", by, "--json"}, f.now);
    REQUIRE_MESSAGE(together.status == 0, together.err);
    Run one = run({"--ledger", both, "--config", f.config, "--by", by, "--json"}, f.now);
    REQUIRE(one.status == 0);
    rapidjson::Document a, b;
    REQUIRE_FALSE(a.Parse(together.out.c_str()).HasParseError());
    REQUIRE_FALSE(b.Parse(one.out.c_str()).HasParseError());
    CHECK(a["ledgers"].Size() == 2);
    CHECK(a["groups"] == b["groups"]);
    CHECK(a["total"] == b["total"]);
  }
  Run table = run({"--ledger", f.ledger, "--ledger", second, "--config", f.config}, f.now);
  REQUIRE(table.status == 0);
  CHECK(table.out.find("(2 ledgers together)") != std::string::npos);

  Run twice = run({"--ledger", f.ledger, f.tmp.file("./usage.db"), "--json"}, f.now);
  REQUIRE_MESSAGE(twice.status == 0, twice.err);
  rapidjson::Document d;
  REQUIRE_FALSE(d.Parse(twice.out.c_str()).HasParseError());
  CHECK(d["ledgers"].Size() == 1);
  CHECK(d["total"]["requests"].GetInt64() == 3);

  Run missing = run({"--ledger", f.ledger, f.tmp.file("nope.db")}, f.now);
  CHECK(missing.status == 1);
  CHECK(missing.err.find("nope.db") != std::string::npos);
}

// `tokendiet usage --compare` on a ledger with known rows: the known figures
// in its JSON, a row priced now when it was not priced when written, shadow
// rows left out, and a table that fits 80 columns.
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

struct Fixture {
  TempDir tmp;
  std::string ledger = tmp.file("usage.db");
  std::string config = tmp.file("tokendiet.yaml");

  Fixture() {
    auto opened = ledger::LedgerStore::open(ledger, ledger::LedgerStore::Access::ReadWrite);
    REQUIRE(opened.store);
    std::vector<ledger::LedgerRow> rows;
    auto add = [&](const char* arm, const char* key, std::optional<double> cost, std::uint32_t rereads = 0) {
      ledger::LedgerRow r = sample_row(int(rows.size()));
      r.arm = arm;
      r.session_key = key;
      r.input_cost_usd = cost;
      r.rereads = rereads;
      r.recall_rounds = 0;
      r.context_errors = 0;
      r.status = 200;
      rows.push_back(r);
    };
    add("treatment", "t1", 0.01, 1);
    add("treatment", "t1", 0.01, 1);
    add("treatment", "t2", 0.01);
    add("treatment", "t2", 0.01);
    add("control", "c1", 0.02);
    add("control", "c2", 0.02);
    add("control", "c2", 0.02);
    add("control", "c2", std::nullopt);  // priced now: 8,000 fresh tokens at $2.5 per million
    rows.back().prompt_tokens = 8'000;
    rows.back().cached_read_tokens = rows.back().cache_write_tokens = 0;
    add("shadow", "s1", 5.0);  // no experiment: left out
    REQUIRE(opened.store->insert(rows).empty());
    std::ofstream(config) << "prices:\n  - {model: \"gpt-4o*\", input: 2.5, cached_input: 1.25, output: 10}\n";
  }
};

std::string run(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int status = cli::usage_run(args, out, err, 0);
  REQUIRE_MESSAGE(status == 0, err.str());
  return out.str();
}

}  // namespace

TEST_CASE("usage --compare --json: the arms' known figures and their difference") {
  Fixture f;
  rapidjson::Document doc;
  const std::string out = run({"--compare", "--json", "--ledger", f.ledger, "--config", f.config});
  REQUIRE_FALSE(doc.Parse(out.c_str()).HasParseError());
  const auto& total = doc["total"];
  CHECK(total["treatment"]["sessions"].GetInt64() == 2);
  CHECK(total["control"]["sessions"].GetInt64() == 2);
  CHECK(total["treatment"]["requests"].GetInt64() == 4);
  CHECK(total["control"]["requests"].GetInt64() == 4);
  CHECK(total["treatment"]["requests_per_session"]["value"].GetDouble() == doctest::Approx(2));
  CHECK(total["treatment"]["cost_per_session_usd"]["value"].GetDouble() == doctest::Approx(0.02));
  CHECK(total["control"]["cost_per_session_usd"]["value"].GetDouble() == doctest::Approx(0.04));
  CHECK(total["control"]["cost_per_request_usd"]["value"].GetDouble() == doctest::Approx(0.02));
  CHECK(total["control"]["unpriced_requests"].GetInt64() == 0);
  CHECK(total["treatment"]["rereads_per_100_requests"]["value"].GetDouble() == doctest::Approx(50));
  CHECK(total["difference"]["cost_per_session_usd"]["value"].GetDouble() == doctest::Approx(-50));
  CHECK(total["difference"]["rereads_per_100_requests"]["value"].GetDouble() == doctest::Approx(50));
  CHECK(total["difference"]["cost_per_session_usd"]["low"].IsNumber());
  CHECK(std::string(total["sentence"].GetString()).find("2 treatment and 2 control sessions") != std::string::npos);
  REQUIRE(doc["groups"].Size() == 1);
  CHECK(std::string(doc["groups"][0]["key"].GetString()) == "gpt-4o");
  CHECK(doc["resamples"].GetInt() == 2000);
  // The same ledger, the same answer (the bootstrap is seeded).
  CHECK(run({"--compare", "--json", "--ledger", f.ledger, "--config", f.config}) == out);
}

TEST_CASE("usage --compare: the table fits 80 columns and ends with the sentence") {
  Fixture f;
  const std::string out = run({"--compare", "--ledger", f.ledger, "--config", f.config});
  std::istringstream lines(out);
  std::string line, last;
  while (std::getline(lines, line)) {
    if (line.rfind("ledger: ", 0) != 0) CHECK_MESSAGE(line.size() <= 80, line);
    if (!line.empty()) last = line;
  }
  CHECK(out.find("cost per session") != std::string::npos);
  CHECK(out.find("-50.0 %") != std::string::npos);
  CHECK(last.find("sessions") != std::string::npos);
  MESSAGE(out);
}

TEST_CASE("usage --compare with --by: a usage error") {
  std::ostringstream out, err;
  CHECK(cli::usage_run({"--compare", "--by", "day"}, out, err, 0) == 2);
  CHECK(err.str().find("--by does not apply to --compare") != std::string::npos);
}

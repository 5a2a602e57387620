// The recaps a model wrote, kept in the ledger's file (ledger/ledger_state.cpp)
// so a restart renders them again without asking the model.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cstdint>
#include <vector>

#include "ledger/ledger.hpp"
#include "ledger/ledger_store.hpp"
#include "temp_dir.hpp"

using namespace td::ledger;
using td::test::TempDir;

TEST_CASE("recap summaries: stored and read back oldest first; a key keeps its first text; the newest kept") {
  TempDir tmp;
  auto opened = LedgerStore::open(tmp.file("usage.db"), LedgerStore::Access::ReadWrite);
  REQUIRE_MESSAGE(opened.store, opened.error);
  LedgerStore& store = *opened.store;
  CHECK(store.load_recap_summaries(10).empty());
  const std::uint64_t high = 0xfedcba9876543210ull;  // the high bit set: stored as a negative int64
  REQUIRE(store.save_recap_summaries({{high, "first"}, {2, ""}}, 10).empty());
  REQUIRE(store.save_recap_summaries({{high, "second"}, {3, "three"}}, 10).empty());
  CHECK(store.load_recap_summaries(10) == std::vector<RecapSummaryRow>{{high, "first"}, {2, ""}, {3, "three"}});
  CHECK(store.load_recap_summaries(2) == std::vector<RecapSummaryRow>{{2, ""}, {3, "three"}});
  REQUIRE(store.save_recap_summaries({{4, "four"}}, 2).empty());  // keep 2: the oldest go
  CHECK(store.load_recap_summaries(10) == std::vector<RecapSummaryRow>{{3, "three"}, {4, "four"}});
}

TEST_CASE("recap summaries: the writer stores them with its next batch; an older file read-only has none") {
  TempDir tmp;
  LedgerOptions options;
  options.path = tmp.file("usage.db");
  auto opened = Ledger::open(options);
  REQUIRE_MESSAGE(opened.ledger, opened.error);
  opened.ledger->save_recap_summary({11, "recap text"});
  REQUIRE(opened.ledger->flush());
  CHECK(opened.ledger->load_recap_summaries() == std::vector<RecapSummaryRow>{{11, "recap text"}});
  opened.ledger->close();
  opened.ledger->save_recap_summary({12, "after close"});  // dropped, no crash
  opened.ledger.reset();

  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(options.path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "DROP TABLE recap_summaries; PRAGMA user_version = 4", nullptr, nullptr, nullptr) ==
          SQLITE_OK);
  sqlite3_close(db);
  auto ro = LedgerStore::open(options.path, LedgerStore::Access::ReadOnly);
  REQUIRE(ro.store);
  CHECK(ro.store->load_recap_summaries(10).empty());
}

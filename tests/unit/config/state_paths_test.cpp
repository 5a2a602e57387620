#include <doctest/doctest.h>

#include "config/state_paths.hpp"

using namespace td::config;
using std::nullopt;

TEST_CASE("ledger path: systemd's STATE_DIRECTORY first") {
  CHECK(default_ledger_path("/var/lib/tokendiet", "/home/u/.st", "/home/u") == "/var/lib/tokendiet/usage.db");
  CHECK(default_ledger_path("/var/lib/tokendiet/", nullopt, nullopt) == "/var/lib/tokendiet/usage.db");
  CHECK(default_ledger_path("/var/lib/a:/var/lib/b", nullopt, nullopt) == "/var/lib/a/usage.db");
}

TEST_CASE("ledger path: then XDG_STATE_HOME, then HOME") {
  CHECK(default_ledger_path(nullopt, "/home/u/.st", "/home/u") == "/home/u/.st/tokendiet/usage.db");
  CHECK(default_ledger_path("", "/x", "/home/u") == "/x/tokendiet/usage.db");
  CHECK(default_ledger_path(nullopt, nullopt, "/home/u") == "/home/u/.local/state/tokendiet/usage.db");
  // The XDG spec says to ignore a relative XDG_STATE_HOME.
  CHECK(default_ledger_path(nullopt, "rel/state", "/home/u") == "/home/u/.local/state/tokendiet/usage.db");
  CHECK(default_ledger_path(nullopt, nullopt, nullopt) == nullopt);
  CHECK(default_ledger_path("", "", "") == nullopt);
}

TEST_CASE("ledger_file: a configured path wins") {
  Ledger l;
  l.path = "/data/usage.db";
  CHECK(ledger_file(l) == "/data/usage.db");
}

TEST_CASE("archive directory: beside the ledger in the state directory, unless configured") {
  CHECK(default_state_path("archive", "/var/lib/tokendiet", nullopt, "/home/u") == "/var/lib/tokendiet/archive");
  CHECK(default_state_path("archive", nullopt, "/home/u/.st", "/home/u") == "/home/u/.st/tokendiet/archive");
  CHECK(default_state_path("archive", nullopt, nullopt, "/home/u") == "/home/u/.local/state/tokendiet/archive");
  CHECK(default_state_path("archive", nullopt, nullopt, nullopt) == nullopt);
  Archive a;
  a.path = "/data/archive";
  CHECK(archive_dir(a) == "/data/archive");
}

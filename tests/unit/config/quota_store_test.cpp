// quota_store: the Redis address forms, and the refusals with their reasons.
#include <doctest/doctest.h>

#include "config/load.hpp"
#include "config/quota_store.hpp"
#include "helpers.hpp"

using namespace td::config;
using td::config::test::expect_one_error;

TEST_CASE("quota_store: local by default, redis:// and unix:// forms") {
  LoadResult r = load_string("", "t.yaml");
  REQUIRE(r.ok());
  CHECK_FALSE(r.config.quota_store.shared());
  CHECK(r.config.quota_store.timeout_ms == 50);

  auto tcp = parse_quota_store("redis://Redis.Internal:6380/2");
  REQUIRE(tcp.ok());
  CHECK(tcp.value.host == "redis.internal");
  CHECK(tcp.value.port == 6380);
  CHECK(tcp.value.db == 2);
  CHECK(tcp.value.socket.empty());

  auto plain = parse_quota_store("redis://127.0.0.1");
  REQUIRE(plain.ok());
  CHECK(plain.value.port == 6379);
  CHECK(plain.value.db == 0);

  auto auth = parse_quota_store("redis://td:p%40ss%3Aword@10.0.0.5:6379/0");
  REQUIRE(auth.ok());
  CHECK(auth.value.user == "td");
  CHECK(auth.value.password == "p@ss:word");
  CHECK(auth.value.host == "10.0.0.5");

  auto unix_sock = parse_quota_store("unix:///run/redis/redis.sock?db=3");
  REQUIRE(unix_sock.ok());
  CHECK(unix_sock.value.socket == "/run/redis/redis.sock");
  CHECK(unix_sock.value.db == 3);

  LoadResult loaded = load_string("quota_store: redis://127.0.0.1:7000/1\nquota_store_timeout_ms: 20ms\n", "t.yaml");
  REQUIRE(loaded.ok());
  CHECK(loaded.config.quota_store.shared());
  CHECK(loaded.config.quota_store.port == 7000);
  CHECK(loaded.config.quota_store.timeout_ms == 20);
}

TEST_CASE("quota_store: refused forms say why, at their line") {
  expect_one_error("listen: 127.0.0.1:0\nquota_store: rediss://cache:6380\n", 2, 14, "hiredis 0.14 has no TLS");
  expect_one_error("quota_store: http://cache:6379\n", 1, 14, "expected redis://");
  expect_one_error("quota_store: redis://cache:99999\n", 1, 14, "invalid port");
  expect_one_error("quota_store: redis://cache/zero\n", 1, 14, "database number");
  expect_one_error("quota_store: unix://relative.sock\n", 1, 14, "absolute socket path");
  expect_one_error("quota_store: unix:///run/r.sock?timeout=1\n", 1, 14, "db=N");
  expect_one_error("quota_store_timeout_ms: 0\n", 1, 25, "quota_store_timeout_ms");
}

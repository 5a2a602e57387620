// The Redis client's connection forms against a real redis-server: a unix
// socket, a password (AUTH) and a database number (SELECT) before the first
// command; a wrong password is no connection (commands fail at once).
#include <doctest/doctest.h>

#include <atomic>
#include <future>
#include <thread>

#include "redis_server.hpp"
#include "shared_state/redis_client.hpp"

using namespace td;
using namespace std::chrono_literals;
using shared_state::RedisClient;
using shared_state::RedisReply;

namespace {

RedisReply call(RedisClient& c, std::vector<std::string> argv) {
  auto p = std::make_shared<std::promise<RedisReply>>();
  auto f = p->get_future();
  c.command(std::move(argv), [p](const RedisReply& r) { p->set_value(r); });
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  return f.get();
}

bool ready_within(RedisClient& c, std::chrono::milliseconds ms) {
  const auto end = std::chrono::steady_clock::now() + ms;
  while (std::chrono::steady_clock::now() < end) {
    if (c.ready()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return c.ready();
}

}  // namespace

TEST_CASE("unix socket, password and database: AUTH and SELECT before the first command") {
  const std::string sock = "/tmp/td-redis-" + std::to_string(::getpid()) + ".sock";
  test::RedisServer server({"--unixsocket", sock, "--unixsocketperm", "700", "--requirepass", "s3cret"});
  config::QuotaStore e;
  e.url = "unix://" + sock + "?db=3";
  e.socket = sock;
  e.db = 3;
  e.password = "s3cret";
  e.timeout_ms = 500;
  RedisClient client(e, {"return 'loaded'"}, {});
  client.start();
  REQUIRE(ready_within(client, 5s));
  CHECK(call(client, {"SET", "k", "v"}).str == "OK");
  // The key went to database 3.
  RedisReply db = call(client, {"CLIENT", "INFO"});
  CHECK(db.str.find("db=3") != std::string::npos);
  auto p = std::make_shared<std::promise<RedisReply>>();
  client.evalsha(0, {}, {}, [p](const RedisReply& r) { p->set_value(r); });
  CHECK(p->get_future().get().str == "loaded");
  CHECK(client.describe() == "unix://" + sock + "?db=3");

  config::QuotaStore wrong = e;
  wrong.password = "nope";
  RedisClient refused(wrong, {}, {});
  refused.start();
  CHECK_FALSE(ready_within(refused, 500ms));
  CHECK(call(refused, {"PING"}).failed());
  ::unlink(sock.c_str());
}

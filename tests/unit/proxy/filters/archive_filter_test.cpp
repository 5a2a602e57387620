// GET /v1/tokendiet/archive/<id> (ArchiveFilter): the entry to the key that
// caused it, 404 to any other, read on the archive's thread while the request
// is paused.
#include <doctest/doctest.h>

#include <future>

#include "archive/store.hpp"
#include "proxy/filters/archive_filter.hpp"
#include "proxy/phases/header_map.hpp"
#include "proxy/telemetry/work_pool.hpp"
#include "temp_dir.hpp"

using namespace td::proxy;
using namespace std::chrono_literals;
using td::test::TempDir;

namespace {

RequestContext get(std::string target, std::string key_fp, std::string method = "GET") {
  RequestContext ctx;
  ctx.method = std::move(method);
  ctx.target = std::move(target);
  ctx.key_fingerprint = std::move(key_fp);
  ctx.provider = Provider::openai;
  return ctx;
}

struct Fixture {
  TempDir tmp;
  td::archive::Store store{tmp.path()};
  td::pruning::ArchivedOutput entry{td::pruning::archive_id("evicted\nbytes\n"), "a task", 5, "evicted\nbytes\n"};
  Fixture() { REQUIRE(store.write("0123456789abcdef", std::span(&entry, 1))); }
};

LocalResponse answered(FilterResult r) {
  if (r.answers()) return r.answer();
  REQUIRE(r.pauses());
  std::promise<void> woken;
  if (r.handle()->arm([&] { woken.set_value(); }))
    REQUIRE(woken.get_future().wait_for(10s) == std::future_status::ready);
  REQUIRE_FALSE(r.handle()->cancel());
  auto answer = r.handle()->take_answer();
  REQUIRE(answer);
  return *answer;
}

}  // namespace

TEST_CASE("archive filter: the same key reads the entry; another key, no key or an unknown id get 404") {
  Fixture f;
  WorkPool thread(1, [] {});
  ArchiveFilter filter([&] { return &f.store; }, &thread);
  SimpleHeaderMap headers;

  RequestContext ctx = get("/v1/tokendiet/archive/" + f.entry.id, "0123456789abcdef");
  FilterResult r = filter.request_filter(ctx, headers);
  CHECK(r.pauses());  // read on the archive's thread, not here
  LocalResponse ok = answered(r);
  CHECK(ok.status == 200);
  CHECK(ok.body == f.entry.text);
  CHECK(ok.content_type.starts_with("text/plain"));

  for (std::string key : {"fedcba9876543210", ""}) {
    RequestContext other = get("/v1/tokendiet/archive/" + f.entry.id, key);
    LocalResponse no = answered(filter.request_filter(other, headers));
    CHECK(no.status == 404);
    CHECK(no.body.find(f.entry.text) == std::string::npos);
  }
  RequestContext unknown = get("/v1/tokendiet/archive/td-00000000000000000000000000000000", "0123456789abcdef");
  CHECK(answered(filter.request_filter(unknown, headers)).status == 404);
  RequestContext traversal = get("/v1/tokendiet/archive/../0123456789abcdef/index", "0123456789abcdef");
  CHECK(answered(filter.request_filter(traversal, headers)).status == 404);
}

TEST_CASE("archive filter: an anonymous client's entry is never read back, with no key or any key") {
  Fixture f;
  const td::pruning::ArchivedOutput anonymous{td::pruning::archive_id("anonymous output\n"), "a task", 3,
                                              "anonymous output\n"};
  REQUIRE(f.store.write("", std::span(&anonymous, 1)));
  REQUIRE(f.store.read_any(anonymous.id));  // it is there, for the operator
  WorkPool thread(1, [] {});
  SimpleHeaderMap headers;
  for (WorkPool* on : {&thread, static_cast<WorkPool*>(nullptr)}) {
    ArchiveFilter filter([&] { return &f.store; }, on);
    for (std::string key : {"", "0123456789abcdef"}) {
      CAPTURE(key);
      RequestContext ctx = get("/v1/tokendiet/archive/" + anonymous.id, key);
      LocalResponse no = answered(filter.request_filter(ctx, headers));
      CHECK(no.status == 404);
      CHECK(no.body.find(anonymous.text) == std::string::npos);
    }
  }
}

TEST_CASE("archive filter: other paths go on; other methods get 405; no archive is 404") {
  Fixture f;
  ArchiveFilter filter([&] { return &f.store; }, nullptr);
  SimpleHeaderMap headers;
  RequestContext chat = get("/v1/chat/completions", "0123456789abcdef", "POST");
  CHECK(filter.request_filter(chat, headers).proceeds());
  RequestContext post = get("/v1/tokendiet/archive/" + f.entry.id, "0123456789abcdef", "POST");
  CHECK(answered(filter.request_filter(post, headers)).status == 405);
  ArchiveFilter none([] { return static_cast<td::archive::Store*>(nullptr); }, nullptr);
  RequestContext ctx = get("/v1/tokendiet/archive/" + f.entry.id, "0123456789abcdef");
  CHECK(answered(none.request_filter(ctx, headers)).status == 404);
}

TEST_CASE("archive filter: a read that does not come back in time answers 503, never upstream") {
  Fixture f;
  // The archive's thread never gets to the read.
  struct StuckQueue final : JobQueue {
    std::vector<std::function<void()>> jobs;
    void post(std::function<void()> job) override { jobs.push_back(std::move(job)); }
  } stuck;
  ArchiveFilter filter([&] { return &f.store; }, &stuck);
  SimpleHeaderMap headers;
  RequestContext ctx = get("/v1/tokendiet/archive/" + f.entry.id, "0123456789abcdef");
  FilterResult r = filter.request_filter(ctx, headers);
  REQUIRE(r.pauses());
  CHECK(r.pause_for() == ArchiveFilter::kReadWait);
  REQUIRE(r.handle()->cancel(PausedRequest{&ctx, nullptr}));  // what the session does when kReadWait passed
  const std::optional<LocalResponse> answer = r.handle()->take_answer(PausedRequest{&ctx, nullptr});
  REQUIRE(answer);
  CHECK(answer->status == 503);
  CHECK(answer->body.find("did not answer in time") != std::string::npos);
  // The read, should the thread get to it now, runs no more.
  REQUIRE(stuck.jobs.size() == 1);
  stuck.jobs[0]();
  CHECK_FALSE(r.handle()->take_answer());
}

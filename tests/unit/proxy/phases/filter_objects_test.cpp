#include <doctest/doctest.h>

#include <string>

#include "proxy/phases/filter.hpp"

using namespace td::proxy;

namespace {

// One filter's own state, and a report it publishes for the others.
struct ChunkCount {
  int chunks = 0;
};
struct WordReport {
  std::string word;
};

struct Publisher final : Filter {
  std::string_view name() const override { return "publisher"; }
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap&, std::string& body) override {
    ctx.objects.publish<WordReport>(WordReport{body.substr(0, body.find(' '))});
    return {};
  }
  void response_body_filter(RequestContext& ctx, std::string&, bool) override {
    ++ctx.objects.get<ChunkCount>().chunks;
  }
};

struct Reader final : Filter {
  std::string_view name() const override { return "reader"; }
  std::string seen;
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap&, std::string&) override {
    const WordReport* r = ctx.objects.find<WordReport>();
    seen = r ? r->word : "(none)";
    return {};
  }
};

}  // namespace

TEST_CASE("a filter reads the object another filter published, looked up by its type") {
  Publisher publisher;
  Reader reader;
  SimpleHeaderMap headers;
  RequestContext ctx;
  std::string body = "hello world";
  reader.request_body_filter(ctx, headers, body);
  CHECK(reader.seen == "(none)");  // nothing published yet
  publisher.request_body_filter(ctx, headers, body);
  reader.request_body_filter(ctx, headers, body);
  CHECK(reader.seen == "hello");
  // Publishing again replaces the object: one per type and request.
  body = "again and again";
  publisher.request_body_filter(ctx, headers, body);
  reader.request_body_filter(ctx, headers, body);
  CHECK(reader.seen == "again");
  // Another request sees none of it.
  RequestContext other;
  reader.request_body_filter(other, headers, body);
  CHECK(reader.seen == "(none)");
}

TEST_CASE("a filter's own state lives with the request, one object per type") {
  Publisher f;
  RequestContext a, b;
  std::string chunk = "x";
  f.response_body_filter(a, chunk, false);
  f.response_body_filter(a, chunk, true);
  f.response_body_filter(b, chunk, true);
  CHECK(a.objects.get<ChunkCount>().chunks == 2);
  CHECK(b.objects.get<ChunkCount>().chunks == 1);
  CHECK(a.objects.find<WordReport>() == nullptr);
}

TEST_CASE("objects are destroyed with the request") {
  struct Mark {
    explicit Mark(int& n) : live(n) { ++live; }
    Mark(const Mark&) = delete;
    ~Mark() { --live; }
    int& live;
  };
  int live = 0;
  {
    RequestContext ctx;
    ctx.objects.publish<Mark>(live);
    CHECK(live == 1);
    ctx.objects.publish<Mark>(live);  // the first one replaced
    CHECK(live == 1);
  }
  CHECK(live == 0);
}

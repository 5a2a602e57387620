// The request's own recall source (proxy/reports/recall_offer.hpp,
// docs/design.md §Recall): the texts the request's cuts hid, by their
// handles, beside the tombstones' archive entries; only for the key that sent
// the request; a collision is unknown, never the wrong text; answers bounded.
#include <doctest/doctest.h>

#include <unordered_map>

#include "providers/recall_tool.hpp"
#include "proxy/reports/recall_offer.hpp"
#include "pruning/snip.hpp"

using namespace td;
using td::proxy::RequestRecall;

namespace {
std::shared_ptr<const std::string> text(std::string s) { return std::make_shared<const std::string>(std::move(s)); }
}  // namespace

TEST_CASE("request recall: a handle answers its text, an archive id its entry, for the request's key only") {
  std::string out;
  for (int i = 1; i <= 400; ++i) out += "line " + std::to_string(i) + " of the output\n";
  const auto hidden = text(out);
  const RequestRecall r("key1", {pruning::ArchivedOutput{pruning::archive_id("old"), "task", 1, "old"}},
                        {hidden, text("another text")});
  const std::string h = pruning::recall_handle(out);
  CHECK(r.read("key1", h) == out);
  CHECK(r.read("key1", pruning::archive_id("old")) == "old");
  CHECK_FALSE(r.read("key2", h));
  CHECK_FALSE(r.read("key1", "t00000000"));
  CHECK_FALSE(r.empty());
  CHECK(RequestRecall("key1", {}).empty());
  // The notice's name with its range, answered as the loop does: exactly
  // those lines, and past the bound a part that says which lines it shows.
  auto args = providers::parse_recall_arguments(R"({"id":")" + h + R"(:41-43"})");
  REQUIRE(args);
  const auto found = r.read("key1", args->id);
  CHECK(providers::recall_result_text(*args, found, 16384) ==
        "line 41 of the output\nline 42 of the output\nline 43 of the output\n");
  auto all = providers::parse_recall_arguments(R"({"id":")" + h + R"("})");
  const std::string part = providers::recall_result_text(*all, r.read("key1", all->id), 1000);
  CHECK(part.size() < 1200);
  CHECK(part.find("[tokendiet_recall: lines 1-45 of 400 shown; an answer holds at most 1000 bytes: ask for lines "
                  "46-400 next]") != std::string::npos);
}

TEST_CASE("request recall: two texts under one handle are unknown, never the wrong text") {
  // Two different texts with the same 32-bit handle, found by search.
  std::unordered_map<std::string, std::string> seen;
  std::string a, b;
  for (int i = 0; a.empty(); ++i) {
    std::string t = "text " + std::to_string(i);
    auto [it, inserted] = seen.try_emplace(pruning::recall_handle(t), t);
    if (!inserted) a = it->second, b = t;
  }
  const RequestRecall r("k", {}, {text(a), text(b), text(a)});
  CHECK_FALSE(r.read("k", pruning::recall_handle(a)));
  const RequestRecall one("k", {}, {text(a), text(a)});  // the same text twice: known
  CHECK(one.read("k", pruning::recall_handle(a)) == a);
}

#include <doctest/doctest.h>

#include <atomic>
#include <string>

#include "diet/cached_counter.hpp"
#include "pruning/text_hash.hpp"
#include "pruning/tokenizer/counter.hpp"
#include "pruning/tokenizer/message_count.hpp"

using namespace td::diet;

namespace {

// Counts bytes and how often it was asked.
class Probe final : public td::pruning::TokenCounter {
 public:
  explicit Probe(std::uint64_t salt) : salt_(salt) {}
  std::uint64_t count(std::string_view text) const override {
    ++calls;
    return text.size();
  }
  std::uint64_t cache_salt() const override { return salt_; }
  mutable int calls = 0;

 private:
  std::uint64_t salt_;
};

}  // namespace

TEST_CASE("cached counter: a text is counted once, then looked up") {
  td::tok::CountCache cache(1024);
  Probe inner(42);
  CachedCounter counter(inner, cache);
  const std::string long_text(500, 'x');
  CHECK(counter.count(long_text) == 500);
  CHECK(counter.count(long_text) == 500);
  CHECK(inner.calls == 1);
  CHECK(counter.count(long_text + "y") == 501);
  CHECK(inner.calls == 2);
  // Short texts are not worth a hash.
  counter.count("short");
  counter.count("short");
  CHECK(inner.calls == 4);
  // Another salt (another tokenizer) never sees these counts.
  Probe other(43);
  CachedCounter other_counter(other, cache);
  CHECK(other_counter.count(long_text) == 500);
  CHECK(other.calls == 1);
}

TEST_CASE("cached counter: counters that drift (salt 0) are never cached") {
  td::tok::CountCache cache(1024);
  Probe inner(0);
  CachedCounter counter(inner, cache);
  const std::string long_text(500, 'x');
  counter.count(long_text);
  counter.count(long_text);
  CHECK(inner.calls == 2);
}

TEST_CASE("cached counter: a drifting counter's raw part is cached, its drift applied on every call") {
  td::tok::CountCache cache(1024);
  std::atomic<double> ratio{1.0};
  const td::tok::EstimatingCounter inner(&ratio);
  CachedCounter counter(inner, cache);
  const std::string texts[] = {std::string(500, 'x'), "fn main() { println!(\"héllo, wörld\"); } // 0123456789 \n\t",
                               std::string(300, '\xc3') + std::string(70, '7')};
  for (double r : {1.0, 1.37, 0.61, 2.0}) {
    ratio = r;
    for (const std::string& t : texts) {
      CAPTURE(r);
      CAPTURE(t);
      // Twice: the miss and the hit give what the estimator gives at this ratio.
      CHECK(counter.count(t) == inner.count(t));
      CHECK(counter.count(t) == inner.count(t));
    }
  }
}

namespace {

// Counts bytes times a ratio that moves, and how often it read the bytes.
class RawProbe final : public td::pruning::TokenCounter {
 public:
  std::uint64_t count(std::string_view text) const override { return count_from_raw(raw(text)); }
  std::uint64_t raw_salt() const override { return 7; }
  std::uint64_t raw(std::string_view text) const override {
    ++reads;
    return text.size();
  }
  std::uint64_t count_from_raw(std::uint64_t raw) const override { return raw * ratio; }
  mutable int reads = 0;
  std::uint64_t ratio = 1;
};

}  // namespace

TEST_CASE("cached counter: a drifting counter with a raw part reads a resent text once") {
  td::tok::CountCache cache(1024);
  RawProbe inner;
  CachedCounter counter(inner, cache);
  const std::string long_text(500, 'x');
  CHECK(counter.count(long_text) == 500);
  inner.ratio = 3;
  CHECK(counter.count(long_text) == 1500);
  CHECK(inner.reads == 1);
}

TEST_CASE("cached counter: a text whose hash the caller holds is looked up by it, not hashed again") {
  td::tok::CountCache cache(1024);
  RawProbe inner;
  CachedCounter counter(inner, cache);
  const std::string text(500, 'x');
  CHECK(counter.count_hashed(text, 11, 22) == 500);
  inner.ratio = 2;
  CHECK(counter.count_hashed(text, 11, 22) == 1000);  // the raw value kept, the drift applied
  CHECK(inner.reads == 1);
  // Another hash is another text; short texts are counted straight through.
  CHECK(counter.count_hashed(std::string(501, 'y'), 11, 23) == 1002);
  CHECK(inner.reads == 2);
  counter.count_hashed("short", 1, 2);
  counter.count_hashed("short", 1, 2);
  CHECK(inner.reads == 4);
  // A message counted through its parts' held hashes counts as from their bytes.
  td::pruning::Message m;
  m.role = td::pruning::Role::Tool;
  m.parts.emplace_back().kind = td::pruning::PartKind::ToolResult;
  m.parts.back().text = std::string(700, 'z');
  const std::uint64_t from_bytes = td::tok::count_message(m, counter);
  td::pruning::text_hash(m.parts.back());  // the hash a resent message carries from the parse memo
  // The role's name is short: read on every count. The text: once under the
  // hash's key, then looked up.
  int reads = inner.reads;
  CHECK(td::tok::count_message(m, counter) == from_bytes);
  CHECK(inner.reads == reads + 2);
  reads = inner.reads;
  CHECK(td::tok::count_message(m, counter) == from_bytes);
  CHECK(inner.reads == reads + 1);
}

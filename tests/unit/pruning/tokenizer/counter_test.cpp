#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "pruning/tokenizer/counter.hpp"

using namespace td::tok;

TEST_CASE("models map to their encodings; others get the estimator") {
  for (const char* m : {"gpt-4o", "gpt-4o-mini-2024-07-18", "gpt-4.1", "gpt-4.1-nano", "gpt-4.5-preview", "gpt-5",
                        "gpt-5-mini", "gpt-5.1", "o1", "o1-mini", "o3", "o3-mini", "o4-mini", "chatgpt-4o-latest",
                        "openai/gpt-4o", "GPT-4o", "gpt-oss-120b"}) {
    INFO(m);
    CHECK(encoding_for_model(m) == EncodingId::O200kBase);
  }
  for (const char* m : {"gpt-4", "gpt-4-0613", "gpt-4-turbo", "gpt-4-32k", "gpt-3.5-turbo", "gpt-3.5-turbo-0125",
                        "text-embedding-3-small", "text-embedding-ada-002", "azure/gpt-4"}) {
    INFO(m);
    CHECK(encoding_for_model(m) == EncodingId::Cl100kBase);
  }
  for (const char* m : {"gemini-2.5-pro", "claude-sonnet-4-5", "claude-3-5-haiku", "o2", "omni", "llama-3", ""}) {
    INFO(m);
    CHECK_FALSE(encoding_for_model(m).has_value());
  }
  auto exact = counter_for_model("gpt-4o");
  CHECK(exact->exact());
  CHECK(exact->count("hello world") == 2);
  CHECK(exact->cache_salt() != 0);
  CHECK(exact->cache_salt() != counter_for_model("gpt-4")->cache_salt());
  auto est = counter_for_model("gemini-2.5-flash");
  CHECK_FALSE(est->exact());
  CHECK(est->cache_salt() == 0);
}

TEST_CASE("bytes/4 counts bytes, not characters, rounding up") {
  EstimatingCounter e(1.0, EstimateMethod::BytesOver4);
  CHECK(e.count("") == 0);
  CHECK(e.count("a") == 1);
  CHECK(e.count("abcd") == 1);
  CHECK(e.count("abcde") == 2);
  CHECK(e.count("\xE4\xB8\x80\xE4\xB8\x80\xE4\xB8\x80\xE4\xB8\x80") == 3);  // 4 CJK chars = 12 bytes
  CHECK(EstimatingCounter(1.5, EstimateMethod::BytesOver4).count(std::string(400, 'x')) == 150);
}

// Within one token (fixed-point weights round up).
static bool near(std::uint64_t got, std::uint64_t want) { return got >= want && got <= want + 1; }

TEST_CASE("the byte-class estimator weighs letters, digits, spaces, punctuation, UTF-8") {
  EstimatingCounter e;  // ByteClass is the default
  CHECK(e.method() == EstimateMethod::ByteClass);
  CHECK(e.count("") == 0);
  CHECK(e.count(" ") == 1);                           // never 0 for non-empty text
  CHECK(near(e.count(std::string(1000, 'a')), 229));  // letters: ~4.4 bytes/token
  CHECK(near(e.count(std::string(1000, '7')), 901));  // digits are expensive
  CHECK(near(e.count(std::string(1000, ' ')), 96));   // white space is cheap
  CHECK(near(e.count(std::string(1000, '{')), 587));  // punctuation
  std::string cjk;
  for (int i = 0; i < 100; ++i) cjk += "\xE4\xB8\x80";  // 3 bytes: ~0.92 tokens/char
  CHECK(near(e.count(cjk), 93));
  CHECK(e.count("\xC0\xC0\xC0") == 1);  // odd bytes: clamped, not negative
  // Against the exact count of real text it is within a few percent where
  // bytes/4 is far off (a log line: digits, punctuation).
  const std::string log = "2026-11-22 10:41:07.532 INFO [worker-3] GET /v1/chat/completions 200 1532ms id=7f3a9c";
  const auto exact = static_cast<double>(exact_counter(EncodingId::O200kBase).count(log));
  CHECK(std::abs(static_cast<double>(e.count(log)) - exact) / exact < 0.15);
  CHECK(std::abs(static_cast<double>(EstimatingCounter(1.0, EstimateMethod::BytesOver4).count(log)) - exact) / exact >
        0.3);
  CHECK(raw_estimate("abcd", EstimateMethod::BytesOver4) == 1.0);
}

TEST_CASE("estimator: counted by blocks, the byte-class sum is the byte-by-byte one") {
  // The weights as documented (EstimateMethod), in 1/65536ths, one byte at a time.
  auto weight = [](unsigned char b) {
    double x = 0.552;
    if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z'))
      x = 0.229;
    else if (b >= '0' && b <= '9')
      x = 0.901;
    else if (b == ' ' || b == '\t' || b == '\n' || b == '\r')
      x = 0.096;
    else if (b < 0x80)
      x = 0.587;
    else if (b >= 0xC0)
      x = -0.181;
    return static_cast<std::int64_t>(x * 65536.0 + (x < 0 ? -0.5 : 0.5));
  };
  auto reference = [&](std::string_view t) {
    std::int64_t sum = 0;
    for (unsigned char b : t) sum += weight(b);
    return sum <= 0 ? 0.0 : static_cast<double>(sum) / 65536.0;
  };
  std::uint64_t seed = 42;
  auto next = [&] {
    return static_cast<unsigned char>((seed = seed * 6364136223846793005ULL + 1442695040888963407ULL) >> 56);
  };
  std::vector<std::string> texts = {"", "a", "@[`{/:", std::string(4096 + 17, 'Z'), std::string(300 * 16, '\xC3')};
  for (std::size_t n : {1, 15, 16, 17, 31, 255 * 16, 255 * 16 + 1, 256 * 16 + 5, 10000}) {
    std::string t;
    for (std::size_t i = 0; i < n; ++i) t += static_cast<char>(next());
    texts.push_back(t);
  }
  for (const std::string& t : texts) {
    INFO("length " << t.size());
    CHECK(raw_estimate(t, EstimateMethod::ByteClass) == reference(t));
  }
  // Every byte value, at every position of a block.
  std::string all;
  for (int r = 0; r < 17; ++r)
    for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  CHECK(raw_estimate(all, EstimateMethod::ByteClass) == reference(all));
}

TEST_CASE("calibration: a moving average of billed/estimated per model") {
  Calibration cal(0.1);
  CHECK(cal.ratio("claude-x") == 1.0);
  cal.observe("claude-x", 1000, 1200);
  CHECK(cal.ratio("claude-x") == doctest::Approx(1.2));  // first sample taken whole
  cal.observe("claude-x", 1000, 1400);
  CHECK(cal.ratio("claude-x") == doctest::Approx(1.3));  // 1/n while warming up
  for (int i = 0; i < 200; ++i) cal.observe("claude-x", 1000, 1100);
  CHECK(cal.ratio("claude-x") == doctest::Approx(1.1).epsilon(0.001));
  cal.observe("claude-x", 10, 1000);  // too small to say anything
  CHECK(cal.ratio("claude-x") == doctest::Approx(1.1).epsilon(0.001));
  cal.observe("gemini-y", 1000, 100000);  // absurd: clamped
  CHECK(cal.ratio("gemini-y") == Calibration::kMaxRatio);
  CHECK(cal.ratio("other") == 1.0);

  // The estimator bound to the calibration follows it without a lock.
  auto counter = counter_for_model("claude-x", &cal);
  const auto est = counter->count(std::string(4000, 'x'));  // 916 (4000 letters) * ~1.1, rounded up
  CHECK(est >= 1007);
  CHECK(est <= 1008);
  cal.observe("claude-x", 1000, 1100);
  Calibration restored;
  restored.set_state(cal.state());
  CHECK(restored.ratio("claude-x") == doctest::Approx(cal.ratio("claude-x")));
  auto st = restored.state();
  REQUIRE(st.size() == 2);
  CHECK(st[0].model == "claude-x");
  CHECK(st[0].samples == 203);
}

TEST_CASE("calibration and the exact counters are safe to share across threads") {
  Calibration cal;
  std::vector<std::thread> threads;
  std::vector<std::uint64_t> counts(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) cal.observe("m" + std::to_string(i % 3), 1000, 1000 + t * 10);
      counts[t] = exact_counter(EncodingId::Cl100kBase).count("The quick brown fox jumps over the lazy dog");
    });
  for (auto& th : threads) th.join();
  for (auto c : counts) CHECK(c == 9);
  CHECK(cal.state().size() == 3);
}

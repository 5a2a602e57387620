// Parse/write timings on the largest recorded trajectory. Skipped in normal
// runs (no timed assertions in unit tests); scripts/bench/providers.sh runs it:
//   build/scripts/bench/providers_bench --no-skip
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "bodies.hpp"
#include "providers/request.hpp"
#include "roundtrip.hpp"

using namespace td::providers;
using namespace td::providers::test;

namespace {

// The best of 20 batches: the machine is shared, the minimum is what the code costs.
template <class F>
double micros_per_run(int runs, F&& f) {
  f();  // warm up
  double best = 1e300;
  for (int batch = 0; batch < 20; ++batch) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < runs / 20; ++i) f();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count() / (runs / 20));
  }
  return best;
}

}  // namespace

TEST_CASE("bench: parse and write a large chat body" * doctest::skip()) {
  Trajectory t = load_trajectory(std::string(TD_FIXTURES) + "/replay/mini-swe-agent-12.json");
  const std::string body = chat_body(t, t.messages.size());
  const int runs = 200;
  std::size_t sink = 0;

  // Every run after the first finds the messages in the parsed-message memo,
  // as an agent's next request finds its resent history; without one, all
  // are parsed.
  ParsedMessageMemo memo;
  double cold_us = micros_per_run(runs, [&] { sink += parse(Api::openai_chat, body).request->parts.size(); });
  double parse_us = micros_per_run(runs, [&] { sink += parse(Api::openai_chat, body, &memo).request->parts.size(); });
  double rapidjson_us = micros_per_run(runs, [&] {
    rapidjson::Document d;
    d.Parse(body.data(), body.size());
    sink += d.MemberCount();
  });
  ParsedRequest r = std::move(*parse(Api::openai_chat, body, &memo).request);
  double noedit_us = micros_per_run(runs, [&] { sink += write(r, body).changed; });
  auto& m = r.conversation.messages[r.conversation.messages.size() / 2];
  td::pruning::set_text(m, m.parts[0], "[output hidden]");
  double edit_us = micros_per_run(runs, [&] { sink += write(r, body).body.size(); });
  td::pruning::remove_message(r.conversation.messages[r.conversation.messages.size() / 3]);
  double remove_us = micros_per_run(runs, [&] { sink += write(r, body).body.size(); });

  std::printf("body %zu bytes, %zu messages, %zu parts\n", body.size(), r.messages.size(), r.parts.size());
  std::printf("parse, every message          %8.1f us  (%.2f GB/s)\n", cold_us, body.size() / cold_us / 1e3);
  std::printf("parse, messages resent         %8.1f us  (%.2f GB/s)\n", parse_us, body.size() / parse_us / 1e3);
  std::printf("rapidjson Document, reference %8.1f us\n", rapidjson_us);
  std::printf("write, no edit                %8.1f us\n", noedit_us);
  std::printf("write, one part edited        %8.1f us\n", edit_us);
  std::printf("write, + one message removed  %8.1f us\n", remove_us);
  CHECK(sink > 0);
}

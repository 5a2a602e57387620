// Usage tee / scrubber / include_usage splice throughput, MB/s of body bytes,
// fed in 1 KiB reads as the relay hands them over. Not a test: prints numbers.
//   scripts/bench/usage.sh
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "providers/openai_chat/include_usage.hpp"
#include "providers/usage_reader.hpp"

using namespace td::providers;

namespace {

std::string fixture(const char* rel) {
  std::ifstream in(std::string(TD_SOURCE_DIR) + "/tests/fixtures/" + rel, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "missing fixture %s\n", rel);
    std::exit(1);
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

template <class F>
void report(const char* what, std::size_t bytes, F&& f) {
  int reps = 1;
  double secs = 0;
  for (;; reps *= 2) {  // grow until a run takes >= 0.3 s
    auto t = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f();
    secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    if (secs >= 0.3) break;
  }
  std::printf("%-52s %8.0f MB/s  (%zu bytes x %d)\n", what, bytes * double(reps) / secs / 1e6, bytes, reps);
}

void tee(Api api, const char* ct, const std::string& body) {
  ResponseUsageTee t(api, ct);
  for (std::size_t i = 0; i < body.size(); i += 1024) t.feed(std::string_view(body).substr(i, 1024));
  t.finish();
  if (!t.usage().present) std::abort();
}

}  // namespace

int main() {
  // A long OpenAI stream: the 30-chunk fixture's chunks repeated 200 times.
  std::string fx = fixture("synth/openai-chat-stream-long.sse");
  std::size_t tail = fx.rfind("data: {\"id\"");
  std::string stream;
  for (int i = 0; i < 200; ++i) stream += fx.substr(0, tail);
  stream += fx.substr(tail);

  report("scrubber, injected OpenAI stream", stream.size(), [&] {
    OpenAiUsageScrubber s;
    std::string out;
    for (std::size_t i = 0; i < stream.size(); i += 1024) {
      out.clear();
      s.feed(std::string_view(stream).substr(i, 1024), out);
    }
    s.finish(out);
    if (!s.facts().usage().present) std::abort();
  });
  report("tee, OpenAI stream (client asked for usage)", stream.size(),
         [&] { tee(Api::openai_chat, "text/event-stream", stream); });
  std::string an = fixture("wire/anthropic-stream-thinking.sse");
  report("tee, Anthropic stream", an.size(), [&] { tee(Api::anthropic, "text/event-stream", an); });
  std::string gs = fixture("wire/gemini-stream-thinking.sse");
  report("tee, Gemini stream", gs.size(), [&] { tee(Api::gemini, "text/event-stream", gs); });
  std::string gj = fixture("wire/gemini-generatecontent-thinking.json");
  report("tee, Gemini JSON", gj.size(), [&] { tee(Api::gemini, "application/json", gj); });

  // A 1 MB streaming chat request (2000 tool outputs) gets include_usage.
  std::string msgs;
  for (int i = 0; i < 2000; ++i)
    msgs += std::string(i ? "," : "") + R"({"role":"tool","tool_call_id":"call_)" + std::to_string(i) +
            R"(","content":")" + std::string(480, 'x') + R"( \"quoted\" \n"})";
  std::string body = R"({"model":"gpt-4o","messages":[)" + msgs + R"(],"stream":true})";
  report("inject_include_usage, 1 MB request body", body.size(), [&] {
    if (inject_include_usage(body).outcome != IncludeUsage::injected) std::abort();
  });
}

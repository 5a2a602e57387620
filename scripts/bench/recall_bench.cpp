// The recall round's work at the proxy (docs/design.md §Recall), per format:
// the round that calls tokendiet_recall through the merge, the tool result
// (a 100 KB entry), the continuation's body appended to a 200 KB request, and
// the continuation's answer (4 KB of text) through the merge; 1 KiB reads as
// the relay hands them over. The upstream's own time is not in it. Prints
// microseconds per recall round (of 200: wall median and fastest, CPU median). Not a test.   scripts/bench/recall.sh
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "providers/recall_merge.hpp"
#include "providers/recall_tool.hpp"

using namespace td::providers;

namespace {

std::string sse(const std::string& name, const std::string& data) {
  return (name.empty() ? "" : "event: " + name + "\n") + "data: " + data + "\n\n";
}

struct Rounds {
  Api api;
  const char* name;
  std::string body, call, answer;
};

std::string text_of(std::size_t n) {
  std::string s;
  while (s.size() < n) s += "the log line number " + std::to_string(s.size()) + " says ok ";
  return s.substr(0, n);
}

Rounds anthropic(const std::string& history, const std::string& text) {
  const auto start =
      sse("message_start",
          R"({"type":"message_start","message":{"id":"m","usage":{"input_tokens":50000,"output_tokens":1}}})");
  const auto stop = sse("message_stop", R"({"type":"message_stop"})");
  std::string call =
      start +
      sse("content_block_start",
          R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"tokendiet_recall","input":{}}})") +
      sse("content_block_delta",
          R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"id\":\"td-a\"}"}})") +
      sse("content_block_stop", R"({"type":"content_block_stop","index":0})") +
      sse("message_delta",
          R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}})") +
      stop;
  std::string answer =
      start + sse("content_block_start",
                  R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})");
  for (std::size_t i = 0; i < text.size(); i += 64)
    answer +=
        sse("content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":")" +
                                       text.substr(i, 64) + "\"}}");
  answer += sse("content_block_stop", R"({"type":"content_block_stop","index":0})") +
            sse("message_delta",
                R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":900}})") +
            stop;
  return {Api::anthropic, "anthropic stream",
          R"({"model":"claude-x","stream":true,"messages":[{"role":"user","content":")" + history + "\"}]}", call,
          answer};
}

Rounds openai_chat(const std::string& history, const std::string& text) {
  auto chunk = [](const std::string& delta, const char* finish = "null") {
    return sse("", R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":)" + delta +
                       R"(,"finish_reason":)" + finish + "}]}");
  };
  std::string call =
      chunk(
          R"({"tool_calls":[{"index":0,"id":"call_r","type":"function","function":{"name":"tokendiet_recall","arguments":"{\"id\":\"td-a\"}"}}]})") +
      chunk("{}", "\"tool_calls\"") + sse("", "[DONE]");
  std::string answer;
  for (std::size_t i = 0; i < text.size(); i += 64) answer += chunk(R"({"content":")" + text.substr(i, 64) + "\"}");
  answer += chunk("{}", "\"stop\"") + sse("", "[DONE]");
  return {Api::openai_chat, "openai chat stream",
          R"({"model":"gpt-x","stream":true,"messages":[{"role":"user","content":")" + history + "\"}]}", call, answer};
}

Rounds gemini(const std::string& history, const std::string& text) {
  auto chunk = [](const std::string& parts, bool last) {
    return sse("", R"({"candidates":[{"content":{"role":"model","parts":[)" + parts + "]}" +
                       (last ? R"(,"finishReason":"STOP")" : "") +
                       R"(}],"usageMetadata":{"promptTokenCount":50000,"totalTokenCount":50010},"responseId":"g"})");
  };
  std::string call = chunk(R"({"functionCall":{"name":"tokendiet_recall","args":{"id":"td-a"}}})", true);
  std::string answer;
  for (std::size_t i = 0; i < text.size(); i += 64)
    answer += chunk(R"({"text":")" + text.substr(i, 64) + "\"}", i + 64 >= text.size());
  return {Api::gemini, "gemini stream", R"({"contents":[{"role":"user","parts":[{"text":")" + history + "\"}]}]})",
          call, answer};
}

double cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

void feed(RecallMerge& m, const std::string& bytes, std::string& out) {
  for (std::size_t i = 0; i < bytes.size(); i += 1024) m.feed(std::string_view(bytes).substr(i, 1024), out);
}

void run(const Rounds& r, const std::string& entry) {
  constexpr int kReps = 200;
  std::vector<double> us, cpu;
  std::size_t out_bytes = 0;
  for (int rep = 0; rep < kReps; ++rep) {
    std::string body = r.body, out;
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_us();
    auto m = RecallMerge::make(r.api, true);
    feed(*m, r.call, out);
    const auto calls = m->end_round(out);
    if (calls.size() != 1) std::abort();
    auto args = parse_recall_arguments(calls[0].arguments);
    if (!args || !m->continue_with(body, {recall_result_text(*args, entry, SIZE_MAX)})) std::abort();
    feed(*m, r.answer, out);
    if (!m->end_round(out).empty()) std::abort();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(cpu_us() - c0);
    out_bytes = out.size();
  }
  // The median and the fastest: on a shared machine the fastest is the work itself.
  // CPU time too: on a shared machine the wall clock counts other processes' turns.
  std::sort(us.begin(), us.end());
  std::sort(cpu.begin(), cpu.end());
  std::printf(
      "%-20s wall median %7.1f / fastest %7.1f us, CPU median %7.1f us per recall round"
      "  (entry %zu B, request %zu B, answer %zu B -> client %zu B)\n",
      r.name, us[us.size() / 2], us.front(), cpu[cpu.size() / 2], entry.size(), r.body.size(), r.answer.size(),
      out_bytes);
}

}  // namespace

int main() {
  const std::string entry = text_of(100 * 1024);
  const std::string history = text_of(200 * 1024);
  const std::string text = text_of(4 * 1024);
  run(anthropic(history, text), entry);
  run(openai_chat(history, text), entry);
  run(gemini(history, text), entry);
}

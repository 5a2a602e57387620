// In-process tokenizer benchmarks (not run by ctest; scripts/bench/tokenizer.sh
// runs the side-by-side one with tiktoken).
//
//   tokenizer_bench throughput FILE [RUNS]   vocab load time, then best/median MB/s
//                                            counting FILE, per encoding
//   tokenizer_bench recount FILE [TRIALS]    a ~200k-token agent conversation built
//                                            from FILE: time to count it again after
//                                            one appended message (hashing
//                                            included, JSON parsing excluded)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "providers/billing.hpp"
#include "pruning/tokenizer/counter.hpp"
#include "pruning/tokenizer/message_count.hpp"

using namespace td;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Resident set size in MB (Linux /proc/self/statm).
double rss_mb() {
  std::ifstream in("/proc/self/statm");
  long pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * 4096.0 / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int throughput(const std::string& text, int runs) {
  const double rss0 = rss_mb();
  for (auto id : {tok::EncodingId::O200kBase, tok::EncodingId::Cl100kBase}) {
    auto t0 = Clock::now();
    const tok::Encoding& enc = tok::Encoding::get(id);
    const double load = seconds_since(t0);
    std::printf("%-12s loaded: RSS +%.1f MB over the process before any vocabulary\n", std::string(enc.name()).c_str(),
                rss_mb() - rss0);
    std::uint64_t n = 0;
    std::vector<double> ts;
    for (int r = 0; r < runs; ++r) {
      t0 = Clock::now();
      n = enc.count(text);
      ts.push_back(seconds_since(t0));
    }
    const double best = *std::min_element(ts.begin(), ts.end());
    std::printf("%-12s load %6.1f ms  %zu bytes -> %llu tokens  best %7.2f MB/s  median %7.2f MB/s  (%.2f Mtok/s)\n",
                std::string(enc.name()).c_str(), load * 1e3, text.size(), static_cast<unsigned long long>(n),
                text.size() / best / 1e6, text.size() / median(ts) / 1e6, n / best / 1e6);
  }
  return 0;
}

// An agent-like history: a system prompt, then user / assistant tool call /
// tool result turns whose texts are consecutive ~4 KB slices of the corpus.
pruning::Conversation build_conversation(const std::string& text, const pruning::TokenCounter& counter,
                                         std::uint64_t target_tokens) {
  using pruning::Part;
  using pruning::PartKind;
  using pruning::Role;
  pruning::Conversation c;
  c.model = "gpt-4o";
  auto add = [&](Role role, Part part) {
    pruning::Message m;
    m.role = role;
    m.parts.push_back(std::move(part));
    c.messages.push_back(std::move(m));
  };
  add(Role::System, Part{.kind = PartKind::Text, .text = "You are a coding agent. Use the tools."});
  c.fixed_overhead_text =
      R"([{"type":"function","function":{"name":"read_file","description":"Read a file",)"
      R"("parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}])";
  std::size_t pos = 0;
  std::uint64_t tokens = 0;
  int turn = 0;
  while (tokens < target_tokens && pos < text.size()) {
    std::size_t end = std::min(text.size(), pos + 4096);
    while (end < text.size() && text[end - 1] != '\n') ++end;
    std::string slice = text.substr(pos, end - pos);
    pos = end;
    tokens += counter.count(slice);
    switch (turn++ % 3) {
      case 0:
        add(Role::User, Part{.kind = PartKind::Text, .text = std::move(slice)});
        break;
      case 1:
        add(Role::Assistant, Part{.kind = PartKind::ToolCall,
                                  .text = R"({"path":"src/file)" + std::to_string(turn) + R"(.cpp"})",
                                  .id = "call_" + std::to_string(turn),
                                  .name = "read_file"});
        c.messages.back().parts.insert(c.messages.back().parts.begin(),
                                       Part{.kind = PartKind::Text, .text = std::move(slice)});
        break;
      default:
        add(Role::Tool,
            Part{.kind = PartKind::ToolResult, .text = std::move(slice), .id = "call_" + std::to_string(turn - 1)});
    }
  }
  return c;
}

int recount(const std::string& text, int trials) {
  const auto& counter = tok::exact_counter(tok::EncodingId::O200kBase);
  const tok::BillingRules rules = providers::billing_rules_for(providers::Api::openai_chat);
  pruning::Conversation conv = build_conversation(text, counter, 200'000);
  tok::CountCache cache;
  auto t0 = Clock::now();
  const tok::ConversationCount cold = tok::count_conversation(conv, counter, &cache, rules);
  const double cold_s = seconds_since(t0);
  std::uint64_t history_bytes = conv.fixed_overhead_text.size();
  for (const auto& m : conv.messages)
    for (const auto& p : m.parts) history_bytes += p.text.size();
  std::printf("conversation: %zu messages, %llu bytes, %llu tokens; first count (cold cache) %.2f ms\n",
              conv.messages.size(), static_cast<unsigned long long>(history_bytes),
              static_cast<unsigned long long>(cold.total), cold_s * 1e3);

  // Each trial appends one new message (a distinct ~300-byte tool result, as
  // an agent's next turn brings), recounts the whole request, and removes it.
  std::vector<double> ts;
  std::uint64_t total = 0, hits = 0;
  for (int t = 0; t < trials; ++t) {
    pruning::Message m;
    m.role = pruning::Role::Tool;
    m.parts.push_back(
        pruning::Part{.kind = pruning::PartKind::ToolResult,
                      .text = "exit status 0 (trial " + std::to_string(t) + ")\n" + text.substr(1000 + t * 7, 300)});
    conv.messages.push_back(std::move(m));
    t0 = Clock::now();
    const tok::ConversationCount c = tok::count_conversation(conv, counter, &cache, rules);
    ts.push_back(seconds_since(t0));
    total = c.total;
    hits = c.cache_hits;
    conv.messages.pop_back();
  }
  const double best = *std::min_element(ts.begin(), ts.end());
  std::printf(
      "recount after one appended message: best %.3f ms, median %.3f ms over %d trials "
      "(%llu tokens, %llu of %zu messages from the cache)\n",
      best * 1e3, median(ts) * 1e3, trials, static_cast<unsigned long long>(total),
      static_cast<unsigned long long>(hits), conv.messages.size() + 1);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::strcmp(argv[1], "--help") == 0) {
    std::fprintf(stderr, "usage: tokenizer_bench throughput|recount FILE [RUNS]\n");
    return argc < 3 ? 2 : 0;
  }
  const std::string text = read_file(argv[2]);
  if (text.empty()) return std::fprintf(stderr, "tokenizer_bench: cannot read %s\n", argv[2]), 1;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 0;
  if (std::strcmp(argv[1], "throughput") == 0) return throughput(text, runs ? runs : 7);
  if (std::strcmp(argv[1], "recount") == 0) return recount(text, runs ? runs : 200);
  std::fprintf(stderr, "tokenizer_bench: unknown mode %s\n", argv[1]);
  return 2;
}

// Every copied line the recorded agent used (cli/replay_retention.hpp), per
// request as the default diet sends it: one JSON line each, for
// scripts/bench/replay/copied_lines.py, which says where the lost ones came
// from and what the agent did between the read and the copy
// (docs/benchmarks.md §The lines agents copy). With `--refs`, the lost
// references too (`"ref":true`) and each request's charged recall rounds;
// with `--forms`, each lost item's source message as that request sent it
// (which cut hid it: a snip, an outline, a dedupe, a fold, the recap).
//   build/scripts/bench/copied_dump [--config FILE] [--refs] [--forms] FILE... > dump.jsonl
//   build/scripts/bench/copied_dump [--config FILE] --body N FILE  (the request of N messages as sent)
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/config_file.hpp"
#include "cli/replay.hpp"
#include "cli/replay_measure.hpp"
#include "cli/replay_retention.hpp"
#include "config/match.hpp"
#include "providers/parsed_message_memo.hpp"

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<std::string> config_path;
  std::vector<std::string> files;
  bool with_refs = false, with_forms = false;
  std::size_t body = 0;  // --body N: print only the body of the request of N messages, as sent
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--refs") {
      with_refs = true;
    } else if (a == "--body" && i + 1 < argc) {
      body = std::stoul(argv[++i]);
    } else if (a == "--forms") {
      with_forms = true;
    } else if (a == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else {
      files.push_back(a);
    }
  }
  auto cfg = td::cli::command_config(config_path, std::cerr);
  if (!cfg) return 1;
  for (const auto& file : files) {
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string error;
    auto t = td::cli::parse_trajectory(ss.str(), error);
    if (!t) {
      std::fprintf(stderr, "%s: %s\n", file.c_str(), error.c_str());
      return 1;
    }
    td::tok::CountCache cache(std::size_t{1} << 12);
    td::providers::ParsedMessageMemo memo;
    td::cli::ReferenceIndex refs(t->texts);
    const std::vector<td::cli::SentRequest> sent = td::cli::sent_requests(*t, *cfg, nullptr);
    std::vector<std::uint32_t> rounds(sent.size());
    if (with_refs) {
      const auto rules = td::cli::charge_rules(td::config::profile_for(*cfg, t->model), td::cli::RecallMode::FromStart);
      const td::cli::Charges charges = td::cli::charge_losses(*t, sent, rules);
      for (std::size_t i = 0; i < rounds.size() && i < charges.rows.size(); ++i) rounds[i] = charges.rows[i].rounds;
    }
    for (std::size_t r = 0; r < sent.size(); ++r) {
      const td::cli::SentRequest& s = sent[r];
      if (body) {
        if (s.messages == body) std::printf("%s\n", s.sent.c_str());
        continue;
      }
      std::printf("{\"id\":%s,\"n\":%zu,\"stale\":%zu,\"rounds\":%u}\n", quoted(t->id).c_str(), s.messages,
                  std::size_t{s.stale_messages}, rounds[r]);
      const auto lines = refs.copied_lines(s.messages);
      const auto references = with_refs ? refs.counted(s.messages) : std::vector<std::string>{};
      if (lines.empty() && references.empty()) continue;
      const td::cli::Measured after = td::cli::measure(s.sent, cache, memo);
      auto emit = [&](const std::string& item, bool ref) {
        const bool present = after.all_text.find(item) != std::string::npos;
        if (ref && present) return;
        const std::size_t source = refs.first_seen(item);
        std::string form = "null";
        if (with_forms && !present && after.raw.size() == s.messages && source < after.raw.size())
          form = quoted(after.raw[source]);
        std::printf(
            "{\"id\":%s,\"n\":%zu,\"stale\":%zu,\"source\":%zu,\"present\":%s,\"ref\":%s,\"line\":%s,"
            "\"form\":%s}\n",
            quoted(t->id).c_str(), s.messages, std::size_t{s.stale_messages}, source, present ? "true" : "false",
            ref ? "true" : "false", quoted(item).c_str(), form.c_str());
      };
      for (const auto& line : lines) emit(line, false);
      for (const auto& ref : references) emit(ref, true);
    }
  }
  return 0;
}

// Every copied line the recorded agent used (cli/replay_retention.hpp), per
// request as the default diet sends it: one JSON line each, for
// scripts/bench/replay/copied_lines.py, which says where the lost ones came
// from and what the agent did between the read and the copy
// (docs/benchmarks.md §The lines agents copy).
//   build/scripts/bench/copied_dump [--config FILE] FILE... > dump.jsonl
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
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--config" && i + 1 < argc) {
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
    for (const td::cli::SentRequest& s : td::cli::sent_requests(*t, *cfg, nullptr)) {
      std::printf("{\"id\":%s,\"n\":%zu,\"stale\":%zu}\n", quoted(t->id).c_str(), s.messages,
                  std::size_t{s.stale_messages});
      const auto lines = refs.copied_lines(s.messages);
      if (lines.empty()) continue;
      const td::cli::Measured after = td::cli::measure(s.sent, cache, memo);
      for (const auto& line : lines)
        std::printf("{\"id\":%s,\"n\":%zu,\"stale\":%zu,\"source\":%zu,\"present\":%s,\"line\":%s}\n",
                    quoted(t->id).c_str(), s.messages, std::size_t{s.stale_messages}, refs.first_seen(line),
                    after.all_text.find(line) != std::string::npos ? "true" : "false", quoted(line).c_str());
    }
  }
  return 0;
}

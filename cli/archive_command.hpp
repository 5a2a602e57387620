// `tokendiet archive ls|show ID|id FILE`: the archive of evicted outputs as the
// operator sees it (docs/design.md §The archive), read-only: every API key's
// entries, from the archive's directory.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/options.hpp"

namespace td::cli {

struct ArchiveOptions {
  std::vector<std::string> words;  // "ls", "show" and the id, or "id" and a file
  std::optional<std::string> key, dir, config;
  bool json = false;

  bool operator==(const ArchiveOptions&) const = default;
};

Parsed<ArchiveOptions> parse_archive_args(const std::vector<std::string>& args);

// The command with its streams passed in. Exit 0 on success, 1 when the
// archive (a directory that does not exist included) or config cannot be
// read or `show` finds no such entry, 2 on usage errors. out_is_terminal:
// `show` prints the entry with its control characters made visible.
int archive_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                bool out_is_terminal = false);

}  // namespace td::cli

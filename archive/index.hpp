// The archive's index: one line per entry in each key's directory, appended
// as entries are written (docs/design.md §The archive):
//
//   <created unix seconds> <id> <tokens> <bytes> <task>\n
//
// The task's title is escaped (\\ and \n) so that a line is one entry. A line
// that does not parse (a write torn by a crash) is skipped; the entry files
// are the truth, the index what `ls` shows about them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace td::archive {

struct IndexLine {
  std::int64_t created = 0;  // unix seconds
  std::string id;
  std::uint32_t tokens = 0;
  std::uint64_t bytes = 0;
  std::string task;
  bool operator==(const IndexLine&) const = default;
};

std::string render_index_line(const IndexLine& line);

// Every line of an index file's text that parses, in file order.
std::vector<IndexLine> parse_index(std::string_view text);

// "td-" + 32 lowercase hex digits: an id that can be a file name.
bool valid_id(std::string_view id);

// A key fingerprint as http_rules makes it (16 lowercase hex digits) or ""
// (an anonymous client: its entries are written, never read by key).
bool valid_key_fp(std::string_view key_fp);

}  // namespace td::archive

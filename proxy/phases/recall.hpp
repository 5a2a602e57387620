// Where the recall loop reads archived outputs back (docs/design.md §Recall).
// The diet filter sets RequestContext::recall when the request it wrote went
// out with tombstones and the tokendiet_recall tool (providers/recall_tool.hpp);
// the recall filter then answers the model's recall calls itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace td::proxy {

// What one round of the recall loop may answer (docs/design.md §Recall,
// bounds): the profile's recall_max_calls and recall_max_answer_bytes (the
// defaults here are the profile's), and the proxy's limits.max_body_bytes
// for the continuation's body (0: none).
struct RecallLimits {
  std::uint32_t max_calls = 4;
  std::size_t max_answer_bytes = 16384;
  std::uint64_t max_body_bytes = 0;
};

struct RecallSource {
  virtual ~RecallSource() = default;
  RecallLimits limits;
  // The archived text of entry `id` under API-key fingerprint `key_fp`;
  // nullopt when there is none (an unknown id, or another key's entry).
  virtual std::optional<std::string> read(std::string_view key_fp, std::string_view id) const = 0;
};

}  // namespace td::proxy

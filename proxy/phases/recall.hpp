// Where the recall loop reads archived outputs back (docs/design.md §Recall).
// The diet filter sets RequestContext::recall when the request it wrote went
// out with tombstones and the tokendiet_recall tool (providers/recall_tool.hpp);
// the recall filter then answers the model's recall calls itself.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace td::proxy {

struct RecallSource {
  virtual ~RecallSource() = default;
  // The archived text of entry `id` under API-key fingerprint `key_fp`;
  // nullopt when there is none (an unknown id, or another key's entry).
  virtual std::optional<std::string> read(std::string_view key_fp, std::string_view id) const = 0;
};

}  // namespace td::proxy

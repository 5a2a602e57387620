// What the proxy does with a request as a whole, decided per request
// (pruning/decision.hpp) and reported in the log line, the ledger row and the
// x-tokendiet-mode header by its name.
#pragma once

#include <cstdint>

namespace td::pruning {

enum class Mode : std::uint8_t {
  None,      // nothing pruned (profile disabled): the request goes as it came
  Standard,  // the profile's pipeline
  Survival,  // the TPM runway is short: compressed harder to fit, held, or answered 429
  Semantic,  // the profile's pipeline, and completed tasks' outputs archived behind tombstones
};

// "none", "standard", "survival", "semantic": the names the log and the ledger's mode column hold.
constexpr const char* mode_name(Mode m) {
  switch (m) {
    case Mode::None:
      return "none";
    case Mode::Standard:
      return "standard";
    case Mode::Survival:
      return "survival";
    case Mode::Semantic:
      return "semantic";
  }
  return "none";
}

}  // namespace td::pruning

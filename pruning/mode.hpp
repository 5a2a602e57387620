// What the proxy does with a request as a whole, decided per request
// (pruning/decision.hpp) and reported in the log line, the ledger row and the
// x-tokendiet-mode header by its name. The tri-modal policy's third mode,
// Semantic, comes with the task archive.
#pragma once

#include <cstdint>

namespace td::pruning {

enum class Mode : std::uint8_t {
  None,      // nothing pruned (profile disabled): the request goes as it came
  Standard,  // the profile's pipeline
  Survival,  // the TPM runway is short: compressed harder to fit, held, or answered 429
};

// "none", "standard", "survival": the names the log and the ledger's mode column hold.
constexpr const char* mode_name(Mode m) {
  switch (m) {
    case Mode::None: return "none";
    case Mode::Standard: return "standard";
    case Mode::Survival: return "survival";
  }
  return "none";
}

}  // namespace td::pruning

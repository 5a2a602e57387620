// What the proxy does with a request as a whole, decided per request
// (pruning/decision.hpp) and reported in the log line and the ledger row by
// its name. The tri-modal policy will add Semantic and Survival; the
// pipeline itself runs Standard.
#pragma once

#include <cstdint>

namespace td::pruning {

enum class Mode : std::uint8_t {
  None,      // nothing pruned (profile disabled): the request goes as it came
  Standard,  // the profile's pipeline
};

// "none", "standard": the names the log and the ledger's mode column hold.
constexpr const char* mode_name(Mode m) {
  switch (m) {
    case Mode::None: return "none";
    case Mode::Standard: return "standard";
  }
  return "none";
}

}  // namespace td::pruning

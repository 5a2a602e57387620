// libFuzzer: YAML text through the config loader (errors, never a crash).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/load.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const td::config::LoadResult r = td::config::load_string(text, "fuzz.yaml");
  for (const auto& e : r.errors) (void)td::config::format_error(e);
  return 0;
}

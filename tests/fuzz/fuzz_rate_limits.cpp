// libFuzzer: response headers (one "name: value" per line) through the
// rate-limit header parser and its date and duration readers.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "providers/rate_limits.hpp"

using namespace td::providers;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<Header> headers;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos) headers.push_back({line.substr(0, colon), line.substr(colon + 1)});
    (void)parse_go_duration(line);
    (void)parse_rfc3339(line);
    (void)parse_http_date(line);
    start = end + 1;
  }
  (void)parse_rate_limits(headers, SysTime{std::chrono::seconds(1'764'000'000)});
  return 0;
}

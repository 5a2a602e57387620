// An answer made by a filter instead of going upstream (e.g. survival mode's
// 429 with Retry-After). Use provider_error_body() (proxy/phases/errors.hpp)
// for a body in the calling provider's own error shape.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace td::proxy {

struct LocalResponse {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra fields
};

}  // namespace td::proxy

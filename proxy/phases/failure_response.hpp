// What the client is told when no upstream response came, or none it could
// be given (an UpstreamFailure): the status, the x-tokendiet-error code and
// the message of the provider-shaped error body (errors.hpp), and the cause
// for ctx.error.
// One pure mapping, so every failure is answered the same way wherever the
// network code met it.
#pragma once

#include <string>
#include <string_view>

#include "proxy/phases/upstream_failure.hpp"

namespace td::proxy {

struct FailureAnswer {
  unsigned status = 0;    // 502 or 504; 0: nobody to answer (the client left)
  std::string_view code;  // "upstream_unreachable" | "upstream_timeout" | "upstream_bad_response"
  std::string error;      // the cause, for ctx.error and the access line
  std::string message;    // the error body's message
};

// `upstream_name` and `upstream_url` name the upstream in the message
// ("tokendiet: upstream openai (https://api.openai.com): no response: ...").
FailureAnswer client_answer(const UpstreamFailure& failure, std::string_view upstream_name,
                            std::string_view upstream_url);

}  // namespace td::proxy

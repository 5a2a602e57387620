#include "proxy/phases/failure_response.hpp"

namespace td::proxy {

FailureAnswer client_answer(const UpstreamFailure& f, std::string_view upstream_name, std::string_view upstream_url) {
  using Kind = UpstreamFailure::Kind;
  FailureAnswer a;
  const std::string limit = std::to_string(f.limit_ms);
  switch (f.kind) {
    case Kind::client_gone:
      return a;
    case Kind::no_upstream:
      a.status = 502;
      a.code = "upstream_unreachable";
      a.error = "no upstream configured for '" + f.detail + "'";
      a.message = "tokendiet: " + a.error;
      return a;
    case Kind::connect_failed:
      a.error = f.detail;
      break;
    case Kind::connect_timeout:
      a.error = f.detail;
      break;
    case Kind::send_failed:
      a.error = "cannot send the request: " + f.detail;
      break;
    case Kind::send_timeout:
      a.error = "cannot send the request within " + limit + " ms";
      break;
    case Kind::response_timeout:
      a.error = "no response headers within " + limit + " ms";
      break;
    case Kind::no_response:
      a.error = "no response: " + f.detail;
      break;
    case Kind::bad_response:
      a.error = "bad response: " + f.detail;
      break;
  }
  const bool timeout =
      f.kind == Kind::connect_timeout || f.kind == Kind::send_timeout || f.kind == Kind::response_timeout;
  a.status = timeout ? 504 : 502;
  a.code = timeout                        ? "upstream_timeout"
           : f.kind == Kind::bad_response ? "upstream_bad_response"
                                          : "upstream_unreachable";
  a.message = "tokendiet: upstream ";
  a.message.append(upstream_name).append(" (").append(upstream_url).append("): ").append(a.error);
  return a;
}

}  // namespace td::proxy

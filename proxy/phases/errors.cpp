#include "proxy/phases/errors.hpp"

#include "proxy/phases/json_text.hpp"

namespace td::proxy {
namespace {

// OpenAI's error.type values for the statuses the proxy emits.
std::string_view openai_type(unsigned status) {
  switch (status) {
    case 400:
    case 404:
    case 405:
    case 413:
    case 431:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 429:
      return "rate_limit_exceeded";
    default:
      return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

// Anthropic's error.type values (docs.anthropic.com/en/api/errors).
std::string_view anthropic_type(unsigned status) {
  switch (status) {
    case 400:
    case 431:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 529:
      return "overloaded_error";
    default:
      return "api_error";
  }
}

// Google's canonical status names (google.rpc.Code) for HTTP statuses.
std::string_view gemini_status(unsigned status) {
  switch (status) {
    case 400:
    case 413:
    case 431:
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "PERMISSION_DENIED";
    case 404:
      return "NOT_FOUND";
    case 429:
      return "RESOURCE_EXHAUSTED";
    case 501:
      return "UNIMPLEMENTED";
    case 503:
    case 502:
      return "UNAVAILABLE";
    case 504:
      return "DEADLINE_EXCEEDED";
    default:
      return status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION";
  }
}

}  // namespace

std::string provider_error_body(Provider provider, unsigned status, std::string_view message,
                                std::string_view gateway_code) {
  std::string out;
  out.reserve(128 + message.size());
  switch (provider) {
    case Provider::anthropic:
      out += R"({"type":"error","error":{"type":")";
      out += anthropic_type(status);
      out += R"(","message":)";
      append_json_string(out, message);
      out += "}}";
      break;
    case Provider::gemini:
      out += R"({"error":{"code":)";
      out += std::to_string(status);
      out += R"(,"message":)";
      append_json_string(out, message);
      out += R"(,"status":")";
      out += gemini_status(status);
      out += "\"}}";
      break;
    case Provider::openai:
    case Provider::other:
      out += R"({"error":{"message":)";
      append_json_string(out, message);
      out += R"(,"type":")";
      out += openai_type(status);
      out += R"(","param":null,"code":)";
      if (status == 502 || status == 504) {
        if (gateway_code.empty()) gateway_code = status == 502 ? "upstream_unreachable" : "upstream_timeout";
        append_json_string(out, gateway_code);
      } else {
        out += "null";
      }
      out += "}}";
      break;
  }
  return out;
}

}  // namespace td::proxy

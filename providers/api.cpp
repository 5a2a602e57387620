#include "providers/api.hpp"

#include "providers/format_adapter.hpp"

namespace td::providers {

std::string_view name(Api api) { return adapter(api).name; }

std::string_view request_path(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path;
}

std::optional<Api> api_for_target(std::string_view target) {
  const std::string_view path = request_path(target);
  for (Api api : kApis)
    if (adapter(api).serves_path(path)) return api;
  return std::nullopt;
}

}  // namespace td::providers

// HeaderMap (the Beast-free header view filters use) over Beast's fields.
// Only the network code includes this.
#pragma once

#include <boost/beast/http/fields.hpp>

#include <string>
#include <vector>

#include "proxy/phases/header_map.hpp"
#include "proxy/net/http_rules.hpp"

namespace td::proxy {

class BeastHeaderMap final : public HeaderMap {
 public:
  explicit BeastHeaderMap(boost::beast::http::fields& f) : f_(f) {}
  std::string_view get(std::string_view name) const override {
    auto it = f_.find(name);
    return it == f_.end() ? std::string_view{} : std::string_view(it->value());
  }
  bool contains(std::string_view name) const override { return f_.find(name) != f_.end(); }
  void set(std::string_view name, std::string_view value) override { f_.set(name, value); }
  void add(std::string_view name, std::string_view value) override { f_.insert(name, value); }
  void erase(std::string_view name) override { f_.erase(name); }
  void for_each(const std::function<void(std::string_view, std::string_view)>& fn) const override {
    for (auto& field : f_) fn(std::string_view(field.name_string()), std::string_view(field.value()));
  }

 private:
  boost::beast::http::fields& f_;
};

// Whether a field never goes to the other side: hop-by-hop (RFC 9110 §7.6.1)
// or, when `ours` is set, one of our own x-tokendiet-* request headers.
inline bool is_dropped_field(const boost::beast::http::fields::value_type& f, bool ours) {
  using boost::beast::http::field;
  switch (f.name()) {
    case field::connection:
    case field::keep_alive:
    case field::te:
    case field::trailer:
    case field::transfer_encoding:
    case field::upgrade:
    case field::proxy_authenticate:
    case field::proxy_authorization:
    case field::proxy_connection:
      return true;
    case field::unknown:
      break;
    default:
      return false;  // a known field that is not hop-by-hop
  }
  std::string_view n(f.name_string());
  if (is_hop_by_hop(n)) return true;
  return ours && n.size() > 12 && iequals(n.substr(0, 12), "x-tokendiet-");
}

// Removes hop-by-hop fields (and the ones Connection names; with `ours`, our
// own x-tokendiet-* ones). One pass over the fields and nothing allocated when
// there is nothing to remove, the common case.
inline void strip_dropped_fields(boost::beast::http::fields& f, bool ours) {
  namespace http = boost::beast::http;
  // The names Connection lists (other than the hop-by-hop ones, dropped
  // anyway), copied: erasing invalidates views into the fields.
  std::vector<std::string> listed;
  for (auto it = f.find(http::field::connection); it != f.end() && it->name() == http::field::connection; ++it) {
    std::string_view v = it->value();
    while (!v.empty()) {
      auto comma = v.find(',');
      std::string_view token = trim_ows(v.substr(0, comma));
      if (!token.empty() && !is_hop_by_hop(token)) listed.emplace_back(token);
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  auto named = [&](std::string_view n) {
    for (const auto& l : listed)
      if (iequals(n, l)) return true;
    return false;
  };
  for (auto it = f.begin(); it != f.end();) {
    if (is_dropped_field(*it, ours) || (!listed.empty() && named(it->name_string())))
      it = f.erase(it);
    else
      ++it;
  }
}

}  // namespace td::proxy

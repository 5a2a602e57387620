// HeaderMap (the Beast-free header view filters use) over Beast's fields.
// Only the network code includes this.
#pragma once

#include <boost/beast/http/fields.hpp>

#include "proxy/header_map.hpp"

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

}  // namespace td::proxy

// A Beast-free view of an HTTP header block, so filters (proxy/phases/filter.hpp)
// compile without Beast. Names compare case-insensitively; values are as sent.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace td::proxy {

class HeaderMap {
 public:
  // First value of `name`, "" when absent.
  virtual std::string_view get(std::string_view name) const = 0;
  virtual bool contains(std::string_view name) const = 0;
  // Replaces every field called `name` by one with this value.
  virtual void set(std::string_view name, std::string_view value) = 0;
  // Appends a field (keeps existing ones of the same name).
  virtual void add(std::string_view name, std::string_view value) = 0;
  // Removes every field called `name`.
  virtual void erase(std::string_view name) = 0;
  // Visits the fields in wire order.
  virtual void for_each(const std::function<void(std::string_view name, std::string_view value)>& f) const = 0;

 protected:
  ~HeaderMap() = default;
};

bool iequals(std::string_view a, std::string_view b);

// A plain HeaderMap for unit tests of filters (and anything not on the wire).
class SimpleHeaderMap final : public HeaderMap {
 public:
  SimpleHeaderMap() = default;
  SimpleHeaderMap(std::initializer_list<std::pair<std::string, std::string>> init) : fields_(init) {}

  std::string_view get(std::string_view name) const override {
    for (auto& [n, v] : fields_)
      if (iequals(n, name)) return v;
    return {};
  }
  bool contains(std::string_view name) const override {
    for (auto& f : fields_)
      if (iequals(f.first, name)) return true;
    return false;
  }
  void set(std::string_view name, std::string_view value) override {
    erase(name);
    add(name, value);
  }
  void add(std::string_view name, std::string_view value) override { fields_.emplace_back(name, value); }
  void erase(std::string_view name) override {
    std::erase_if(fields_, [&](auto& f) { return iequals(f.first, name); });
  }
  void for_each(const std::function<void(std::string_view, std::string_view)>& f) const override {
    for (auto& [n, v] : fields_) f(n, v);
  }
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    unsigned char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x += 32;
    if (y >= 'A' && y <= 'Z') y += 32;
    if (x != y) return false;
  }
  return true;
}

}  // namespace td::proxy

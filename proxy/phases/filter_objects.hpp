// The objects filters keep with a request, looked up by type
// (docs/design.md §Filter state): a filter's own scratch state (an SSE
// parser that must survive across body chunks) and the reports it publishes
// for the filters after it and for the logging phase (the diet's report, the
// usage the upstream billed). One object per type and request; a type is
// owned by the filter that publishes it, every other filter only reads it.
#pragma once

#include <memory>
#include <utility>
#include <vector>

namespace td::proxy {

class FilterObjects {
 public:
  FilterObjects() = default;
  FilterObjects(const FilterObjects&) = delete;
  FilterObjects& operator=(const FilterObjects&) = delete;
  FilterObjects(FilterObjects&&) = default;
  FilterObjects& operator=(FilterObjects&&) = default;

  // The request's T, null when nobody published one.
  template <class T>
  T* find() {
    for (auto& e : entries_)
      if (e.key == key<T>()) return &static_cast<Holder<T>&>(*e.object).value;
    return nullptr;
  }
  template <class T>
  const T* find() const {
    return const_cast<FilterObjects*>(this)->find<T>();
  }

  // The request's T, made from `args` (replacing one published before).
  template <class T, class... Args>
  T& publish(Args&&... args) {
    auto object = std::make_unique<Holder<T>>(std::forward<Args>(args)...);
    T& value = object->value;
    for (auto& e : entries_)
      if (e.key == key<T>()) {
        e.object = std::move(object);
        return value;
      }
    if (entries_.empty()) entries_.reserve(kTypical);  // one allocation for a request's objects
    entries_.push_back(Entry{key<T>(), std::move(object)});
    return value;
  }

  // Withdraws the request's T (a decision that no longer stands).
  template <class T>
  void erase() {
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->key == key<T>()) {
        entries_.erase(it);
        return;
      }
  }

  // The request's T, default-made on first use: a filter's own state.
  template <class T>
  T& get() {
    if (T* found = find<T>()) return *found;
    return publish<T>();
  }

 private:
  struct Object {
    virtual ~Object() = default;
  };
  template <class T>
  struct Holder final : Object {
    template <class... Args>
    explicit Holder(Args&&... args) : value(std::forward<Args>(args)...) {}
    T value;
  };
  // One address per type in the whole program (an inline variable).
  template <class T>
  static inline const char kTag = 0;
  template <class T>
  static const void* key() {
    return &kTag<T>;
  }
  struct Entry {
    const void* key;
    std::unique_ptr<Object> object;
  };
  static constexpr std::size_t kTypical = 12;  // a chat request's state and reports
  std::vector<Entry> entries_;
};

}  // namespace td::proxy

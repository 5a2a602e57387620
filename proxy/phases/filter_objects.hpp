// The objects filters keep with a request, looked up by type
// (docs/design.md §Filter state): a filter's own scratch state (an SSE
// parser that must survive across body chunks) and the reports it publishes
// for the filters after it and for the logging phase (the diet's report, the
// usage the upstream billed). One object per type and request; a type is
// owned by the filter that publishes it, every other filter only reads it.
//
// Every request of a chat request's path publishes a handful of them, so
// they cost what a slot per filter cost before: a look-up is an index (each
// type gets a small number on first use), and they are placed one after the
// other in one block the request allocates at its first object.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <memory_resource>
#include <new>
#include <utility>
#include <vector>

namespace td::proxy {

class FilterObjects {
 public:
  FilterObjects() = default;
  FilterObjects(const FilterObjects&) = delete;
  FilterObjects& operator=(const FilterObjects&) = delete;
  FilterObjects(FilterObjects&& other) noexcept
      : slots_(std::exchange(other.slots_, {})), arena_(std::move(other.arena_)) {}
  FilterObjects& operator=(FilterObjects&& other) noexcept {
    if (this != &other) {
      destroy_all();
      slots_ = std::exchange(other.slots_, {});
      arena_ = std::move(other.arena_);
    }
    return *this;
  }
  ~FilterObjects() { destroy_all(); }

  // The request's T, null when nobody published one.
  template <class T>
  T* find() {
    const std::size_t i = id<T>();
    if (i >= slots_.size() || !slots_[i]) return nullptr;
    return &static_cast<Holder<T>*>(slots_[i])->value;
  }
  template <class T>
  const T* find() const {
    return const_cast<FilterObjects*>(this)->find<T>();
  }

  // The request's T, made from `args` (replacing one published before).
  template <class T, class... Args>
  T& publish(Args&&... args) {
    const std::size_t i = id<T>();
    if (i >= slots_.size()) slots_.resize(std::max<std::size_t>(i + 1, kTypical), nullptr);
    if (!arena_) arena_ = std::make_unique<std::pmr::monotonic_buffer_resource>(kBlockBytes);
    void* at = arena_->allocate(sizeof(Holder<T>), alignof(Holder<T>));
    auto* object = new (at) Holder<T>(std::forward<Args>(args)...);  // if it throws, nothing changed
    if (slots_[i]) slots_[i]->~Object();
    slots_[i] = object;
    return object->value;
  }

  // Withdraws the request's T (a decision that no longer stands).
  template <class T>
  void erase() {
    const std::size_t i = id<T>();
    if (i >= slots_.size() || !slots_[i]) return;
    slots_[i]->~Object();
    slots_[i] = nullptr;
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
    explicit Holder(Args&&... args) : value{std::forward<Args>(args)...} {}  // braces: aggregates too
    T value;
  };

  // A type's number, the same for the whole process, given on first use.
  static std::size_t next_id() {
    static std::atomic<std::size_t> next{0};
    return next.fetch_add(1, std::memory_order_relaxed);
  }
  template <class T>
  static std::size_t id() {
    static const std::size_t mine = next_id();
    return mine;
  }

  void destroy_all() {
    for (Object*& o : slots_)
      if (o) {
        o->~Object();
        o = nullptr;
      }
  }

  static constexpr std::size_t kTypical = 16;       // the types a chat request publishes, and room
  static constexpr std::size_t kBlockBytes = 2048;  // their objects, in one block (more: another)
  std::vector<Object*> slots_;                      // by type number; null: none
  std::unique_ptr<std::pmr::monotonic_buffer_resource> arena_;
};

}  // namespace td::proxy

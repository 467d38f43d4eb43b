#pragma once
// std::visit over a reduction (or any variant) with one lambda per alternative.

namespace twobody {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};

}  // namespace twobody

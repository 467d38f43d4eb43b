#include <thread>

#include "twobody/backend.hpp"
#include "twobody/cpu/run_plan.hpp"
#include "twobody/metric_dispatch.hpp"

namespace twobody {

namespace {

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::string device() const override {
    return "host, " + std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
  }
  Result run(const Plan& plan) override {
    return visit_pair_function(*plan.stat, plan.a->dim(), [&](const auto& f) {
      return cpu::run_plan<std::decay_t<decltype(f)>::dim>(f, plan);
    });
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace twobody

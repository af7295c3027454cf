// Two kernel families for one product, as one tunable Kernel (gemm_alternatives.hpp).
#include "gemm_alternatives.hpp"

#include <string>
#include <utility>
#include <vector>

#include "cublaslt_gemm.hpp"
#include "cuda_device.hpp"
#include "gexec/kernels/table.hpp"
#include "skinny_gemm.hpp"

namespace gexec::cuda {
namespace {

class GemmAlternatives final : public Kernel, public Tunable {
 public:
  GemmAlternatives(std::unique_ptr<Kernel> primary, std::unique_ptr<Kernel> other) {
    k_[0] = std::move(primary);
    k_[1] = std::move(other);
  }
  Status prepare() override {
    GEXEC_TRY(k_[0]->prepare());
    GEXEC_TRY(k_[1]->prepare());
    // Variant order: each family's default first, then the rest of the first, then of the second.
    map_ = {{0, 0}, {1, 0}};
    for (int w = 0; w < 2; ++w)
      for (int i = 1; i < t(w)->variant_count(); ++i) map_.push_back({w, i});
    return {};
  }
  Status run() override { return k_[active_]->run(); }
  std::string algo_description() const override { return k_[active_]->algo_description(); }
  std::string note() const override { return k_[active_]->note(); }
  Tunable* tunable() override { return this; }
  Precision precision() const override {
    Precision p = k_[0]->precision();
    return p.merge(k_[1]->precision());
  }
  bool move_operands(const Binding& b) override { return k_[0]->move_operands(b) && k_[1]->move_operands(b); }

  int variant_count() const override { return int(map_.size()); }
  int selected_variant() const override { return selected_; }
  Status select_variant(int i) override {
    if (i < 0 || i >= variant_count()) return runtime_error("no variant " + std::to_string(i));
    GEXEC_TRY(t(map_[size_t(i)].first)->select_variant(map_[size_t(i)].second));
    active_ = map_[size_t(i)].first;
    selected_ = i;
    return {};
  }
  std::string variant_name(int i) const override {
    if (i < 0 || i >= variant_count()) return "none";
    return t(map_[size_t(i)].first)->variant_name(map_[size_t(i)].second);
  }
  std::string signature() const override {
    const std::string a = t(0)->signature(), b = t(1)->signature();
    return a + (a.empty() || b.empty() ? "" : " | ") + b + " (skinny and cuBLASLt)";
  }
  bool rebind(const Binding& b) override { return t(0)->rebind(b) && t(1)->rebind(b); }

 private:
  Tunable* t(int w) const { return k_[w]->tunable(); }
  std::unique_ptr<Kernel> k_[2];
  std::vector<std::pair<int, int>> map_ = {{0, 0}};
  int active_ = 0, selected_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> make_gemm_alternatives(std::unique_ptr<Kernel> primary, std::unique_ptr<Kernel> other) {
  return std::make_unique<GemmAlternatives>(std::move(primary), std::move(other));
}

Result<std::unique_ptr<Kernel>> make_alternative_gemm(CudaDevice& device, const KernelDef& selected, const Graph& g,
                                                      const Op& op, const Binding& binding,
                                                      const KernelOptions& options) {
  if (!options.tune_alternatives || options.forced_for(op)) return std::unique_ptr<Kernel>();
  const KernelImpl want = selected.impl == KernelImpl::cuda_skinny_gemm ? KernelImpl::cublaslt_gemm
                          : selected.impl == KernelImpl::cublaslt_gemm  ? KernelImpl::cuda_skinny_gemm
                                                                        : KernelImpl::none;
  if (want == KernelImpl::none) return std::unique_ptr<Kernel>();
  for (const KernelDef& def : kernel_table()) {
    if (def.backend != Backend::cuda || def.op != op.type || def.impl != want) continue;
    if (want == KernelImpl::cuda_skinny_gemm) {
      if (!plan_skinny(g, op, device.caps().sm_count, device.caps().cc).rejected.empty()) return std::unique_ptr<Kernel>();
      return make_skinny_gemm(device, def, g, op, binding);
    }
    if (!plan_gemm(g, op, options).rejected.empty()) return std::unique_ptr<Kernel>();
    return make_cublaslt_gemm(device, def, g, op, binding, options);
  }
  return std::unique_ptr<Kernel>();
}

}  // namespace gexec::cuda

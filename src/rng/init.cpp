// Host-side input initialisation; the CUDA backend draws the same bits with init_value.hpp.
#include "gexec/rng/init.hpp"

#include <algorithm>
#include <thread>

#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/real_value.hpp"

namespace gexec {

Init effective_init(const Tensor& t) { return t.init ? *t.init : Init{}; }

bool is_drawn(const Init& init) {
  return init.kind == InitKind::normal || init.kind == InitKind::uniform || init.kind == InitKind::zeros ||
         init.kind == InitKind::ones;
}

rng::DrawParams draw_params(const Init& init, uint64_t seed, const Tensor& t) {
  rng::DrawParams p;
  p.key = rng::tensor_key(seed, t.name);
  switch (init.kind) {
    case InitKind::normal: p.dist = rng::Dist::normal; p.a = init.mean; p.b = init.std; break;
    case InitKind::uniform: p.dist = rng::Dist::uniform; p.a = init.low; p.b = init.high; break;
    case InitKind::zeros: p.dist = rng::Dist::zeros; break;
    default: p.dist = rng::Dist::ones; break;
  }
  return p;
}

void store_real(void* data, const Tensor& t, int64_t storage, double real) {
  store_rounded(data, t.dtype, storage, is_f8(t.dtype) ? real / scale_at_storage(t, storage) : real);
}

std::vector<uint8_t> generate_input(const Tensor& t, uint64_t seed) {
  const int64_t n = t.numel();
  std::vector<uint8_t> bytes(static_cast<size_t>(t.bytes()));
  const Init init = effective_init(t);
  void* data = bytes.data();
  if (!is_drawn(init)) {  // values or file: already in storage order
    for (int64_t i = 0; i < n; ++i) store_real(data, t, i, init.values[static_cast<size_t>(i)]);
    return bytes;
  }
  const rng::DrawParams p = draw_params(init, seed, t);
  auto fill = [&](int64_t begin, int64_t end) {
    // f8 values are drawn in real units and stored divided by their scale.
    if (is_f8(t.dtype))
      for (int64_t i = begin; i < end; ++i) store_real(data, t, i, rng::draw(p, uint64_t(i)));
    else
      for (int64_t i = begin; i < end; ++i) store_rounded(data, t.dtype, i, rng::draw(p, uint64_t(i)));
  };
  // Each element depends only on its index, so splitting the range cannot change any bit.
  const int64_t per_thread = 1 << 16;
  const int64_t threads = std::clamp<int64_t>(n / per_thread, 1, std::max(1u, std::thread::hardware_concurrency()));
  if (threads == 1) {
    fill(0, n);
    return bytes;
  }
  std::vector<std::thread> pool;
  for (int64_t w = 0; w < threads; ++w) pool.emplace_back(fill, n * w / threads, n * (w + 1) / threads);
  for (auto& th : pool) th.join();
  return bytes;
}

Tensor drawable_input(const Graph& g, TensorId t, const std::map<std::string, std::vector<uint8_t>>& given,
                      uint64_t seed) {
  const Tensor& x = g.tensor(t);
  if (!x.scale.is_block() || x.scale.tensor == kNone) return x;
  const Tensor& s = g.tensor(x.scale.tensor);
  const auto it = given.find(s.name);
  const std::vector<uint8_t> bytes = it != given.end() ? it->second : generate_input(s, seed);
  if (int64_t(bytes.size()) != s.bytes()) return x;  // the caller refuses bytes of another size
  return with_block_values(x, reinterpret_cast<const float*>(bytes.data()));
}

}  // namespace gexec

// Seed 002's N-body row of Table 5 (regular against compact bins, 1.02x on its GTX 280), beside
// the engine's forces. Bodies uniform at a liquid's density in a periodic box, Lennard-Jones within
// a cutoff. The seed's kernel, as its section 3.4 describes it: a thread a body, in the bodies'
// own order (N-body's output has no lattice to tile, so no shared staging: the seed found none
// helps), reading its 27 neighbour bins straight from global memory, its float64 sums in
// registers. The two layouts the seed compares, read by the same kernel:
//  - regular: every bin padded to the deepest bin's depth, with a count a bin (the seed's "count
//    method": the padding is never read);
//  - compact: the bins' bodies back to back with the counting sort's offsets.
// The bins are visited in the same order and hold their bodies in the same order either way, so
// the two give the same bits; both are checked against the engine's exact forces
// (twobody::short_range_forces, backend cuda; what `twobody forces` gives), each component within
// 10^-9 of max(1, |F|).
// Prints the kernels' times (median of the repeats, CUDA events), the bins' depth and padding,
// compact over regular, and the engine's run (its plan's phases) on the same bodies.
// Usage: twobody_nbody_bench [bodies=131072] [density=0.8] [cutoff=2.5] [repeats=5]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "twobody/forces.hpp"
#include "twobody/generate.hpp"
#include "twobody/pair_force.hpp"

namespace {

// A body's position and its index (CUDA 13 deprecates double4 for its alignment's ambiguity).
struct alignas(32) Body {
  double x, y, z, w;
};

#define CHECK(call)                                                                                  \
  do {                                                                                               \
    const cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                         \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));    \
      std::exit(1);                                                                                  \
    }                                                                                                \
  } while (0)

struct Bins {
  int side = 0;                        // bins an axis (each at least the cutoff wide)
  std::vector<unsigned> start;         // compact: the offsets (bins + 1)
  std::vector<Body> compact;        // the bodies by bin (w: the body's index)
  unsigned depth = 0;                  // regular: the deepest bin
  std::vector<unsigned> count;         // regular: bodies a bin
  std::vector<Body> regular;        // regular: bins × depth, padded
};

__host__ __device__ inline int bin_of(double x, double box, int side) {
  const int b = static_cast<int>(x / box * side);
  return b < 0 ? 0 : (b >= side ? side - 1 : b);
}

Bins bin_bodies(const std::vector<Body>& bodies, double box, double cutoff) {
  Bins b;
  b.side = static_cast<int>(std::floor(box / cutoff));
  const std::size_t nbins = static_cast<std::size_t>(b.side) * b.side * b.side;
  std::vector<unsigned> bin(bodies.size());
  b.count.assign(nbins, 0);
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const Body p = bodies[i];
    bin[i] = static_cast<unsigned>(bin_of(p.x, box, b.side) +
                                   b.side * (bin_of(p.y, box, b.side) + b.side * bin_of(p.z, box, b.side)));
    ++b.count[bin[i]];
  }
  b.start.assign(nbins + 1, 0);
  for (std::size_t c = 0; c < nbins; ++c) b.start[c + 1] = b.start[c] + b.count[c];
  b.depth = *std::max_element(b.count.begin(), b.count.end());
  b.compact.resize(bodies.size());
  b.regular.assign(nbins * b.depth, Body{0, 0, 0, -1});
  std::vector<unsigned> fill(nbins, 0);
  for (std::size_t i = 0; i < bodies.size(); ++i) {  // (in the bodies' order within each bin)
    Body p = bodies[i];
    p.w = static_cast<double>(i);
    const unsigned c = bin[i], k = fill[c]++;
    b.compact[b.start[c] + k] = p;
    b.regular[static_cast<std::size_t>(c) * b.depth + k] = p;
  }
  return b;
}

struct Layout {
  const Body* bodies;   // compact: by bin; regular: bins × depth
  const unsigned* start;   // compact
  const unsigned* count;   // regular
  unsigned depth;          // regular
};

template <bool Regular>
__global__ void nbody_kernel(const Body* __restrict__ mine, unsigned n, Layout bins, int side, double box, double cutoff2,
                             twobody::LennardJonesTerms lj, double* __restrict__ force, double* __restrict__ energy) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Body me = mine[i];
  const int b[3] = {bin_of(me.x, box, side), bin_of(me.y, box, side), bin_of(me.z, box, side)};
  double f[3] = {0, 0, 0}, e = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int cx = (b[0] + dx + side) % side, cy = (b[1] + dy + side) % side, cz = (b[2] + dz + side) % side;
        const unsigned c = static_cast<unsigned>(cx + side * (cy + side * cz));
        unsigned first, last;
        if constexpr (Regular) {
          first = c * bins.depth;
          last = first + bins.count[c];
        } else {
          first = bins.start[c];
          last = bins.start[c + 1];
        }
        for (unsigned k = first; k < last; ++k) {
          const Body p = bins.bodies[k];
          if (p.w == static_cast<double>(i)) continue;
          double d[3] = {me.x - p.x, me.y - p.y, me.z - p.z};
          for (double& v : d) v = v - box * nearbyint(v / box);
          const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
          if (!(r2 < cutoff2)) continue;
          const twobody::PairTerm t = lj(r2, 1.0);
          for (int k3 = 0; k3 < 3; ++k3) f[k3] += t.f * d[k3];
          e += 0.5 * t.energy;
        }
      }
  for (int k3 = 0; k3 < 3; ++k3) force[3 * static_cast<std::size_t>(i) + k3] = f[k3];
  energy[i] = e;
}

template <class T>
T* device_copy(const std::vector<T>& v) {
  T* d = nullptr;
  CHECK(cudaMalloc(&d, std::max<std::size_t>(1, v.size()) * sizeof(T)));
  if (!v.empty()) CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// The kernel's median time over `repeats` launches, and its forces and energies.
template <bool Regular>
double run(const Body* mine, unsigned n, const Layout& bins, int side, double box, double cutoff,
           const twobody::LennardJonesTerms& lj, int repeats, std::vector<double>& force, std::vector<double>& energy) {
  double *f = nullptr, *e = nullptr;
  CHECK(cudaMalloc(&f, 3 * std::size_t(n) * sizeof(double)));
  CHECK(cudaMalloc(&e, std::size_t(n) * sizeof(double)));
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  std::vector<float> ms;
  const unsigned threads = 128, blocks = (n + threads - 1) / threads;
  for (int r = 0; r <= repeats; ++r) {  // (the first, a warm-up, is not timed)
    CHECK(cudaEventRecord(t0));
    nbody_kernel<Regular><<<blocks, threads>>>(mine, n, bins, side, box, cutoff * cutoff, lj, f, e);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, t0, t1));
    if (r > 0) ms.push_back(t);
  }
  force.resize(3 * std::size_t(n));
  energy.resize(n);
  CHECK(cudaMemcpy(force.data(), f, force.size() * sizeof(double), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(energy.data(), e, energy.size() * sizeof(double), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(f));
  CHECK(cudaFree(e));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::stoull(argv[1]) : 131072;
  const double density = argc > 2 ? std::stod(argv[2]) : 0.8;
  const double cutoff = argc > 3 ? std::stod(argv[3]) : 2.5;
  const int repeats = argc > 4 ? std::max(1, std::stoi(argv[4])) : 5;
  const double box = std::cbrt(static_cast<double>(n) / density);
  if (box < 3 * cutoff) {
    std::fprintf(stderr, "the box (%.4g) must hold 3 bins of the cutoff (%.4g)\n", box, cutoff);
    return 2;
  }
  const twobody::PointSet points = twobody::generate_uniform_box(n, 3, box, 4);
  std::vector<Body> bodies(n);
  for (std::size_t i = 0; i < n; ++i) bodies[i] = {points.coord(0)[i], points.coord(1)[i], points.coord(2)[i], static_cast<double>(i)};
  const Bins bins = bin_bodies(bodies, box, cutoff);
  const std::size_t nbins = bins.count.size();
  std::printf("nbody-seed: %zu bodies, box %.6g, cutoff %.3g, %d^3 bins; regular depth %u (mean %.2f: %.0f%% of the padded "
              "slots hold a body)\n",
              n, box, cutoff, bins.side, bins.depth, static_cast<double>(n) / static_cast<double>(nbins),
              100.0 * static_cast<double>(n) / (static_cast<double>(nbins) * bins.depth));

  twobody::PairForce pf;
  const twobody::LennardJonesTerms lj(pf, cutoff);
  Body* mine = device_copy(bodies);
  Body* compact = device_copy(bins.compact);
  unsigned* start = device_copy(bins.start);
  Body* regular = device_copy(bins.regular);
  unsigned* count = device_copy(bins.count);
  const Layout compact_layout{compact, start, nullptr, 0};
  const Layout regular_layout{regular, nullptr, count, bins.depth};
  std::vector<double> f_regular, e_regular, f_compact, e_compact;
  const double t_regular = run<true>(mine, static_cast<unsigned>(n), regular_layout, bins.side, box, cutoff, lj, repeats,
                                     f_regular, e_regular);
  const double t_compact = run<false>(mine, static_cast<unsigned>(n), compact_layout, bins.side, box, cutoff, lj, repeats,
                                      f_compact, e_compact);
  const bool same = f_regular == f_compact && e_regular == e_compact;
  std::printf("nbody-seed regular: kernel %.3f ms (median of %d), %.3g MB of bins\n", 1e3 * t_regular, repeats,
              static_cast<double>(bins.regular.size() * sizeof(Body) + nbins * sizeof(unsigned)) / 1e6);
  std::printf("nbody-seed compact: kernel %.3f ms (median of %d), %.3g MB of bins\n", 1e3 * t_compact, repeats,
              static_cast<double>(bins.compact.size() * sizeof(Body) + (nbins + 1) * sizeof(unsigned)) / 1e6);
  std::printf("nbody-seed: compact / regular %.2fx (seed 002, GTX 280: 1.02x); the two layouts' forces %s\n",
              t_regular / t_compact, same ? "are the same bits" : "DIFFER");

  // The engine's exact forces on the same bodies (the second run timed: the first loads its kernels).
  twobody::ForceOptions o;
  o.cutoff = cutoff;
  o.force = pf;
  twobody::RunOptions r;
  r.backend = "cuda";
  (void)twobody::short_range_forces(points, {}, o, twobody::Box::cube(3, box), r);
  const twobody::BodyForces engine = twobody::short_range_forces(points, {}, o, twobody::Box::cube(3, box), r);
  // Each component within 10^-9 of max(1, |F|): the seed kernel's float64 sums of a body's ~40
  // terms against the engine's exact ones (a close contact's term dominates its body's force).
  double worst = 0;
  std::size_t worst_at = 0;
  for (std::size_t k = 0; k < engine.force.size(); ++k) {
    const double off = std::abs(engine.force[k] - f_compact[k]) / std::max(1.0, std::abs(engine.force[k]));
    if (off > worst) {
      worst = off;
      worst_at = k;
    }
  }
  const bool agree = worst <= 1e-9;
  const std::string& plan = engine.info.plan;
  const std::size_t at = plan.rfind("phases");
  const std::string phases = at == std::string::npos ? "" : plan.substr(at, plan.find('\n', at) - at);
  std::printf("nbody-engine cuda: force run %.3f ms (%s)\n", 1e3 * engine.info.seconds, phases.c_str());
  std::printf("nbody: the seed kernel's float64 sums against the engine's exact ones: at most %.3g of max(1, |F|) "
              "(body %zu) (%s)\n",
              worst, worst_at / 3 + 1, agree ? "within 1e-9" : "BEYOND 1e-9");
  for (void* p : {static_cast<void*>(mine), static_cast<void*>(compact), static_cast<void*>(start), static_cast<void*>(regular),
                  static_cast<void*>(count)})
    CHECK(cudaFree(p));
  return same && agree ? 0 : 1;
}
